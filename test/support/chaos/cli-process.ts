/**
 * One process of the deployment under chaos (`run` or a `worker` of the built CLI), as a
 * supervisor keeps it: started, SIGKILLed on purpose, started again; an exit nobody asked for is
 * recorded and the process started again after a pause, as Kubernetes or systemd would.
 *
 * Each incarnation writes stdout and stderr to a file of its own (the child holds the file
 * descriptor, so nothing is lost when this process is busy), and listens for /metrics on a port
 * picked for it.
 *
 * States: stopped → running (start) → killed (kill: SIGKILL, waits for the exit) → running ...;
 * running → exited (on its own) → running (after `restartPauseMs`); stop() ends it for good.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync } from 'node:fs';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import { stopChild } from '../../../src/lib/stop-child.js';

export interface CliProcessOptions {
  /** `run`, `worker-1`, ...: names its log files. */
  name: string;
  /** The built CLI's entry (bin/fleet-upgrade.js). */
  cli: string;
  /** The command and its arguments, without `--listen`. */
  args: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
  /** Pause before an unasked-for exit is followed by a new start (real ms). Default 1000. */
  restartPauseMs?: number;
  /** Starts after unasked-for exits, at most (a process that cannot start must not spin). Default 100. */
  maxRestarts?: number;
}

export interface UnaskedExit {
  name: string;
  incarnation: number;
  code: number | null;
  signal: string | null;
  /** Real ms since the epoch. */
  at: number;
}

export class CliProcess {
  readonly name: string;
  readonly logFiles: string[] = [];
  readonly unaskedExits: UnaskedExit[] = [];
  #child: ChildProcess | undefined;
  #port: number | undefined;
  #expectExit = false;
  #stopped = false;
  #restartTimer: NodeJS.Timeout | undefined;

  constructor(private readonly options: CliProcessOptions) {
    this.name = options.name;
  }

  /** Incarnations started so far. */
  get starts(): number {
    return this.logFiles.length;
  }

  get pid(): number | undefined {
    return this.running ? this.#child?.pid : undefined;
  }

  get running(): boolean {
    const c = this.#child;
    return c !== undefined && c.exitCode === null && c.signalCode === null;
  }

  /** http://127.0.0.1:PORT of the running incarnation's /metrics (and /status for `run`). */
  get url(): string | undefined {
    return this.running && this.#port !== undefined ? `http://127.0.0.1:${this.#port}` : undefined;
  }

  async start(): Promise<void> {
    if (this.#stopped || this.running) return;
    clearTimeout(this.#restartTimer);
    const port = await freeLoopbackPort();
    const file = join(this.options.logDir, `${this.name}-${this.starts + 1}.log`);
    const fd = openSync(file, 'a');
    const child = spawn(
      process.execPath,
      [this.options.cli, ...this.options.args, '--listen', `127.0.0.1:${port}`],
      { env: this.options.env, stdio: ['ignore', fd, fd] },
    );
    closeSync(fd);
    this.logFiles.push(file);
    this.#child = child;
    this.#port = port;
    this.#expectExit = false;
    const incarnation = this.starts;
    child.once('exit', (code, signal) => {
      if (this.#child !== child || this.#expectExit || this.#stopped) return;
      this.unaskedExits.push({ name: this.name, incarnation, code, signal, at: Date.now() });
      if (this.unaskedExits.length > (this.options.maxRestarts ?? 100)) return;
      this.#restartTimer = setTimeout(() => void this.start(), this.options.restartPauseMs ?? 1000);
    });
  }

  /** SIGKILL, and waits (bounded) until it is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (!child || !this.running) return;
    this.#expectExit = true;
    const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    child.kill('SIGKILL');
    await Promise.race([exited, new Promise((r) => setTimeout(r, 10_000))]);
  }

  /** Ends it for good: SIGTERM, SIGKILL after `graceMs`. */
  async stop(graceMs = 8000): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    const child = this.#child;
    if (!child || !this.running) return;
    this.#expectExit = true;
    await stopChild(child, graceMs);
  }
}
