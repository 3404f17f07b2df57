/**
 * What the orgs benchmark samples while its rollout runs, every `everyMs` real ms:
 * - each process's CPU seconds and memory (/proc/PID/stat, /proc/PID/status: VmRSS, VmHWM), and
 *   the machine's busy CPU (/proc/stat), so that what other processes used shows too;
 * - the event-loop delay of `run` and `worker` from their /metrics (prom-client's
 *   nodejs_eventloop_lag_p99_seconds and _max_seconds: its histogram is reset at every collect, so
 *   each scrape tells the delay since the one before; nobody else scrapes them here);
 * - Redis INFO: commands processed, its CPU, memory and peak;
 * - the simulator's /_sim/stats: its clock, requests (in all and per organization), 429s.
 * `summary()` turns the series into rates (per real second for Redis, per simulated second for the
 * service's requests) with their peaks and means.
 */
import { readFileSync } from 'node:fs';
import type { Redis } from 'ioredis';
import { procCpuSeconds, procMemory } from './spawn-simulator.js';

export interface ProcSample {
  cpuSeconds: number;
  rssMb?: number | undefined;
  peakRssMb?: number | undefined;
}

export interface Sample {
  /** Real ms since the epoch. */
  at: number;
  procs: Record<string, ProcSample>;
  /** Busy and total jiffies of the whole machine (/proc/stat). */
  machine?: { busy: number; total: number } | undefined;
  /** Event-loop delay since the previous scrape, ms, by process. */
  lag: Record<string, { p99: number; max: number } | undefined>;
  redis?: { commands: number; cpuSeconds: number; usedMemory: number; usedMemoryPeak: number } | undefined;
  sim?:
    | {
        now: number;
        requests: number;
        rateLimited: number;
        tasksCreated: number;
        byOrg: Record<string, number>;
      }
    | undefined;
}

function machineCpu(): Sample['machine'] {
  try {
    const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
    const f = line.trim().split(/\s+/).slice(1).map(Number);
    const total = f.reduce((a, b) => a + b, 0);
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    return { busy: total - idle, total };
  } catch {
    return undefined;
  }
}

function gauge(text: string, name: string): number | undefined {
  const m = new RegExp(`^${name}(?:\\{[^}]*\\})? ([-+0-9.eE]+|NaN)$`, 'm').exec(text);
  return m ? Number(m[1]) : undefined;
}

async function scrapeLag(url: string): Promise<{ p99: number; max: number } | undefined> {
  try {
    const res = await fetch(`${url}/metrics`, { signal: AbortSignal.timeout(4000) });
    const text = await res.text();
    const p99 = gauge(text, 'nodejs_eventloop_lag_p99_seconds');
    const max = gauge(text, 'nodejs_eventloop_lag_max_seconds');
    if (p99 === undefined || max === undefined) return undefined;
    return { p99: Number((p99 * 1000).toFixed(1)), max: Number((max * 1000).toFixed(1)) };
  } catch {
    return undefined;
  }
}

export function parseInfo(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const line of text.split('\r\n')) {
    const i = line.indexOf(':');
    if (i > 0 && !line.startsWith('#')) out[line.slice(0, i)] = line.slice(i + 1);
  }
  return out;
}

async function redisSample(redis: Redis): Promise<Sample['redis']> {
  try {
    const info = parseInfo(await redis.info());
    return {
      commands: Number(info.total_commands_processed),
      cpuSeconds: Number(info.used_cpu_sys) + Number(info.used_cpu_user),
      usedMemory: Number(info.used_memory),
      usedMemoryPeak: Number(info.used_memory_peak),
    };
  } catch {
    return undefined;
  }
}

async function simSample(url: string): Promise<Sample['sim']> {
  try {
    const res = await fetch(`${url}/_sim/stats`, { signal: AbortSignal.timeout(4000) });
    const s = (await res.json()) as {
      now: number;
      rateLimited: number;
      tasksCreated: number;
      requests: { total: number };
      orgs?: Record<string, { requests: { total: number } }>;
    };
    return {
      now: s.now,
      requests: s.requests.total,
      rateLimited: s.rateLimited,
      tasksCreated: s.tasksCreated,
      byOrg: Object.fromEntries(Object.entries(s.orgs ?? {}).map(([k, v]) => [k, v.requests.total])),
    };
  } catch {
    return undefined;
  }
}

export interface SamplerOptions {
  /** Processes to read /proc of, by name. */
  pids: Record<string, number>;
  /** /metrics bases of the processes that export prom-client's event-loop lag, by name. */
  metrics: Record<string, string>;
  redis: Redis;
  simUrl: string;
  everyMs: number;
}

/** One sample of everything (a process that has ended reads NaN). */
export async function sampleOnce(o: Omit<SamplerOptions, 'everyMs'>): Promise<Sample> {
  const procs: Record<string, ProcSample> = {};
  for (const [name, pid] of Object.entries(o.pids))
    procs[name] = { cpuSeconds: procCpuSeconds(pid), ...procMemory(pid) };
  const names = Object.keys(o.metrics);
  const lags = await Promise.all(names.map((n) => scrapeLag(o.metrics[n] as string)));
  const [redis, sim] = await Promise.all([redisSample(o.redis), simSample(o.simUrl)]);
  return {
    at: Date.now(),
    procs,
    machine: machineCpu(),
    lag: Object.fromEntries(names.map((n, i) => [n, lags[i]])),
    redis,
    sim,
  };
}

export function startSampler(o: SamplerOptions) {
  const samples: Sample[] = [];
  let busy = false;
  const take = async (): Promise<Sample> => {
    const s = await sampleOnce(o);
    samples.push(s);
    return s;
  };
  const timer = setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      await take();
    } finally {
      busy = false;
    }
  }, o.everyMs);
  return {
    samples,
    take,
    stop: () => clearInterval(timer),
  };
}

const r1 = (x: number) => Number(x.toFixed(1));
const r2 = (x: number) => Number(x.toFixed(2));

/** Per-window rates of a counter: `value` over `time`, its peak (over windows) and its mean (first to last). */
export function rates(points: readonly { time: number; value: number }[], perMs: number) {
  const w: number[] = [];
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1] as { time: number; value: number };
    const b = points[i] as { time: number; value: number };
    if (b.time > a.time) w.push(((b.value - a.value) / (b.time - a.time)) * perMs);
  }
  const first = points[0];
  const last = points[points.length - 1];
  const mean =
    first && last && last.time > first.time
      ? ((last.value - first.value) / (last.time - first.time)) * perMs
      : Number.NaN;
  const sorted = [...w].sort((a, b) => a - b);
  return {
    windows: w.length,
    peak: r1(w.length ? Math.max(...w) : Number.NaN),
    p50: r1(sorted[Math.floor(sorted.length / 2)] ?? Number.NaN),
    mean: r1(mean),
  };
}

/** The delay series of one process: the median and the largest of its per-scrape p99s, and the largest max. */
export function lagSummary(values: readonly ({ p99: number; max: number } | undefined)[]) {
  const got = values.filter((v): v is { p99: number; max: number } => v !== undefined);
  if (!got.length) return undefined;
  const p99s = got.map((v) => v.p99).sort((a, b) => a - b);
  return {
    scrapes: got.length,
    p99MedianMs: p99s[Math.floor(p99s.length / 2)] as number,
    p99MaxMs: p99s[p99s.length - 1] as number,
    maxMs: Math.max(...got.map((v) => v.max)),
  };
}

/**
 * CPU seconds of each process between two samples (one absent from `a` started after it: all of its
 * CPU), and the machine's busy CPU seconds besides them.
 */
export function cpuBetween(a: Sample, b: Sample) {
  const out: Record<string, number> = {};
  for (const name of Object.keys(b.procs))
    out[name] = r2((b.procs[name]?.cpuSeconds ?? Number.NaN) - (a.procs[name]?.cpuSeconds ?? 0));
  const machine = a.machine && b.machine ? (b.machine.busy - a.machine.busy) / 100 : Number.NaN; // jiffies of 100 Hz
  const ours = Object.values(out).reduce((x, y) => x + (Number.isFinite(y) ? y : 0), 0);
  return {
    byProcess: out,
    machineBusy: r1(machine),
    others: r1(machine - ours),
    realSeconds: r1((b.at - a.at) / 1000),
  };
}
