/**
 * The deployment's Redis under chaos: a private redis-server on a fixed loopback port with
 * append-only persistence, which the kill loop SIGKILLs once and starts again on the same port
 * from its append-only file.
 *
 * `appendfsync always`: Redis writes and fsyncs each command's AOF record before it answers the
 * command, so every write a process saw acknowledged survives the kill. That is the promise the
 * product builds on ("no Collector gets a second task": `creating` is written before the create
 * is sent), and the one a trusted queue needs. `everysec` only promises "at most about a second
 * lost": with a background fsync under way Redis may postpone the write (up to 2 s) while it
 * answers, and an OS crash loses the last second; a test that passed under it would prove less.
 * On this machine the cost of `always` is small: the rollout writes a few hundred commands per
 * second.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { pingRedis } from '../../../src/lib/redis/create-redis.js';
import { findExecutable, freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import { stopChild } from '../../../src/lib/stop-child.js';

export const APPEND_FSYNC = 'always';

export class AofRedis {
  readonly logFile: string;
  #child: ChildProcess | undefined;
  starts = 0;

  private constructor(
    private readonly binary: string,
    readonly port: number,
    readonly dir: string,
  ) {
    this.logFile = join(dir, 'redis-server.log');
  }

  /** Starts redis-server from PATH in `dir` on a free port; throws when there is none. */
  static async start(dir: string): Promise<AofRedis> {
    const binary = findExecutable('redis-server');
    if (!binary)
      throw new Error('the chaos scenario needs redis-server on PATH (it kills and restarts its own Redis)');
    const redis = new AofRedis(binary, await freeLoopbackPort(), dir);
    await redis.restart();
    return redis;
  }

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    const c = this.#child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** Starts it (again) on the same port and folder: it loads its append-only file. Waits for PING. */
  async restart(): Promise<void> {
    if (this.running) return;
    const fd = openSync(this.logFile, 'a');
    const child = spawn(
      this.binary,
      [
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--dir',
        this.dir,
        '--appendonly',
        'yes',
        '--appendfsync',
        APPEND_FSYNC,
        '--save',
        '',
        '--daemonize',
        'no',
      ],
      { stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    this.#child = child;
    this.starts++;
    const deadline = Date.now() + 30_000;
    while (Date.now() < deadline) {
      if (!this.running) throw new Error(`redis-server exited at start (see ${this.logFile})`);
      // Loading a large AOF answers LOADING: pingRedis reports that as a failure, so we wait.
      if ((await pingRedis(this.url, 500)) === undefined) return;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server did not answer PING within 30 s (see ${this.logFile})`);
  }

  /** SIGKILL: no shutdown, no final write; waits until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || !this.running) return;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await exited;
  }

  async stop(): Promise<void> {
    if (this.#child) await stopChild(this.#child);
  }
}
