/**
 * Starts test/support/simulator-process.ts and answers its URLs, its pid, and readers of its memory
 * (/proc/PID/status: VmRSS now, VmHWM the peak so far; Linux only, undefined elsewhere).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { FleetFileInput } from '../../src/simulator/schema.js';

export interface ChildSimulator {
  url: string;
  baseUrl: string;
  pid: number;
  startMs: number;
  /** Resident memory now and at its peak, MB. */
  memory(): { rssMb?: number; peakRssMb?: number };
  /** CPU seconds (user + system) the process has used so far; NaN when unknown. */
  cpuSeconds(): number;
  stop(): Promise<void>;
}

const script = fileURLToPath(new URL('../../test/support/simulator-process.ts', import.meta.url));

export function procMemory(pid: number | 'self'): { rssMb?: number; peakRssMb?: number } {
  try {
    const text = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => {
      const m = new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(text);
      return m ? Math.round(Number(m[1]) / 1024) : undefined;
    };
    return { rssMb: kb('VmRSS'), peakRssMb: kb('VmHWM') };
  } catch {
    return {};
  }
}

/** utime + stime of /proc/PID/stat, in seconds (clock ticks of 100 Hz, Linux's usual). */
export function procCpuSeconds(pid: number): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

export async function spawnSimulator(fleet: FleetFileInput, timeScale: number): Promise<ChildSimulator> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, FLEET_JSON: JSON.stringify(fleet), TIME_SCALE: String(timeScale) },
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const line = await new Promise<string>((resolve, reject) => {
    let buf = '';
    child.stdout.on('data', (d: Buffer) => {
      buf += d.toString();
      const nl = buf.indexOf('\n');
      if (nl >= 0) resolve(buf.slice(0, nl));
    });
    child.once('exit', (code) => reject(new Error(`simulator child exited with ${code}`)));
  });
  const info = JSON.parse(line) as { url: string; baseUrl: string; pid: number; startMs: number };
  return {
    ...info,
    memory: () => procMemory(info.pid),
    cpuSeconds: () => procCpuSeconds(info.pid),
    stop: async () => {
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5000);
      await exited;
      clearTimeout(timer);
    },
  };
}
