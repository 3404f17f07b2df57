/**
 * The processes of the orgs benchmark: the simulator (orgs-simulator-process.ts, its fleet from a
 * file) and fleet-upgrade's built CLI (`run`, `worker`), each a child of its own whose pid the
 * benchmark reads /proc of. A CLI child writes its stdout and stderr to a log file of its own (the
 * child holds the descriptor: nothing is lost while this process is busy) and listens for
 * /metrics on a free loopback port.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort } from '../../src/lib/redis/redis-server.js';
import { stopChild } from '../../src/lib/stop-child.js';

export interface LagSample {
  /** Real ms since the epoch, when the line arrived. */
  at: number;
  lag: { p50: number; p99: number; max: number };
}

export interface OrgsSimulator {
  url: string;
  baseUrl: string;
  pid: number;
  startMs: number;
  /** Event-loop delay of the simulator's process, one sample per LAG_EVERY_MS. */
  lags: LagSample[];
  stop(): Promise<void>;
}

const simulatorScript = fileURLToPath(new URL('./orgs-simulator-process.ts', import.meta.url));

export async function spawnOrgsSimulator(o: {
  fleetFile: string;
  timeScale: number;
  /** Wall-clock ms at which the shared scaled clock read the wall clock. */
  origin: number;
  logDir: string;
}): Promise<OrgsSimulator> {
  const errFile = join(o.logDir, 'simulator.err');
  const err = openSync(errFile, 'a');
  const child = spawn(process.execPath, ['--import', 'tsx', simulatorScript], {
    env: {
      ...process.env,
      FLEET_FILE: o.fleetFile,
      TIME_SCALE: String(o.timeScale),
      CLOCK_ORIGIN: String(o.origin),
    },
    stdio: ['pipe', 'pipe', err],
  });
  closeSync(err);
  const lags: LagSample[] = [];
  const first = await new Promise<string>((resolve, reject) => {
    let buf = '';
    let resolved = false;
    child.stdout?.on('data', (d: Buffer) => {
      buf += d.toString();
      for (let nl = buf.indexOf('\n'); nl >= 0; nl = buf.indexOf('\n')) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!resolved) {
          resolved = true;
          resolve(line);
        } else {
          const parsed = JSON.parse(line) as { lag?: LagSample['lag'] };
          if (parsed.lag) lags.push({ at: Date.now(), lag: parsed.lag });
        }
      }
    });
    child.once('exit', (code) => {
      if (!resolved) reject(new Error(`the simulator exited (${code}): ${readFileSync(errFile, 'utf8')}`));
    });
  });
  const info = JSON.parse(first) as { url: string; baseUrl: string; pid: number; startMs: number };
  return {
    ...info,
    lags,
    async stop() {
      child.stdin?.end();
      await stopChild(child, 10_000);
    },
  };
}

export interface CliChild {
  name: string;
  pid: number;
  /** http://127.0.0.1:PORT of its /metrics. */
  url: string;
  logFile: string;
  /** Whether it is still running. */
  running(): boolean;
  /** Its exit, if it ended (code or signal). */
  exit(): { code: number | null; signal: string | null } | undefined;
  stop(): Promise<void>;
}

/** Starts `node CLI ...args --listen 127.0.0.1:PORT` with `env` (and nothing else of ours). */
export async function spawnCli(o: {
  name: string;
  cli: string;
  args: string[];
  env: NodeJS.ProcessEnv;
  logDir: string;
}): Promise<CliChild> {
  const port = await freeLoopbackPort();
  const logFile = join(o.logDir, `${o.name}.log`);
  const fd = openSync(logFile, 'a');
  const child: ChildProcess = spawn(process.execPath, [o.cli, ...o.args, '--listen', `127.0.0.1:${port}`], {
    env: o.env,
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  let ended: { code: number | null; signal: string | null } | undefined;
  child.once('exit', (code, signal) => {
    ended = { code, signal };
  });
  if (child.pid === undefined) throw new Error(`${o.name}: could not start ${o.cli}`);
  return {
    name: o.name,
    pid: child.pid,
    url: `http://127.0.0.1:${port}`,
    logFile,
    running: () => ended === undefined,
    exit: () => ended,
    stop: () => stopChild(child, 15_000),
  };
}

/** Waits until `url`/healthz answers (the process is up), or throws after `timeoutMs`. */
export async function waitHealthy(child: CliChild, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (!child.running())
      throw new Error(`${child.name} exited (${JSON.stringify(child.exit())}); see ${child.logFile}`);
    try {
      const res = await fetch(`${child.url}/healthz`, { signal: AbortSignal.timeout(1000) });
      await res.body?.cancel();
      if (res.ok) return;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${child.name} did not answer /healthz within ${timeoutMs} ms; see ${child.logFile}`);
}

/** Log lines of a pino log file by level (warn and above are what a benchmark must look at). */
export function logSummary(file: string): {
  lines: number;
  byLevel: Record<string, number>;
  messages: Record<string, number>;
} {
  const byLevel: Record<string, number> = {};
  const messages: Record<string, number> = {};
  let lines = 0;
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { lines, byLevel, messages };
  }
  const names: Record<number, string> = {
    10: 'trace',
    20: 'debug',
    30: 'info',
    40: 'warn',
    50: 'error',
    60: 'fatal',
  };
  for (const line of text.split('\n')) {
    if (!line) continue;
    lines++;
    try {
      const entry = JSON.parse(line) as { level?: number; msg?: string };
      const level = names[entry.level ?? 0] ?? 'other';
      byLevel[level] = (byLevel[level] ?? 0) + 1;
      if ((entry.level ?? 0) >= 40) messages[entry.msg ?? ''] = (messages[entry.msg ?? ''] ?? 0) + 1;
    } catch {
      byLevel.text = (byLevel.text ?? 0) + 1;
      const key = line.slice(0, 160);
      messages[key] = (messages[key] ?? 0) + 1;
    }
  }
  return { lines, byLevel, messages };
}
