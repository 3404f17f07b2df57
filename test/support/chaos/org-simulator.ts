/**
 * One organization of the chaos scenario: its simulator in a process of its own
 * (org-simulator-process.ts) on the scenario's shared clock, with readers of its introspection
 * (/_sim). Three of them are three deployments of the service, each with its own fleet,
 * credentials, builds and rate limits, as a user with several organizations has them.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { stopChild } from '../../../src/lib/stop-child.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';

const script = fileURLToPath(new URL('./org-simulator-process.ts', import.meta.url));

export class OrgSimulator {
  private constructor(
    readonly name: string,
    readonly url: string,
    readonly baseUrl: string,
    private readonly child: ChildProcess,
  ) {}

  /** Starts it and waits (bounded) for its first line; its stderr is in the error when it fails. */
  static async start(o: {
    name: string;
    fleet: FleetFileInput;
    timeScale: number;
    /** Wall-clock ms at which the shared scaled clock read the wall clock. */
    origin: number;
  }): Promise<OrgSimulator> {
    const child = spawn(process.execPath, ['--import', 'tsx', script], {
      env: {
        ...process.env,
        FLEET_JSON: JSON.stringify(o.fleet),
        TIME_SCALE: String(o.timeScale),
        CLOCK_ORIGIN: String(o.origin),
      },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-4000);
    });
    const line = await new Promise<string>((resolve, reject) => {
      let buf = '';
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the simulator of ${o.name} said nothing within 30 s: ${stderr}`));
      }, 30_000);
      child.stdout?.on('data', (d: Buffer) => {
        buf += d.toString();
        const nl = buf.indexOf('\n');
        if (nl < 0) return;
        clearTimeout(timer);
        resolve(buf.slice(0, nl));
      });
      child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`the simulator of ${o.name} exited (${code}): ${stderr}`));
      });
    });
    const { url, baseUrl } = JSON.parse(line) as { url: string; baseUrl: string };
    return new OrgSimulator(o.name, url, baseUrl, child);
  }

  async get<T>(path: string): Promise<T> {
    const res = await fetch(`${this.url}${path}`, { signal: AbortSignal.timeout(30_000) });
    if (!res.ok) throw new Error(`${this.name}: GET ${path} answered ${res.status}`);
    return (await res.json()) as T;
  }

  async stop(): Promise<void> {
    await stopChild(this.child, 5000);
  }
}
