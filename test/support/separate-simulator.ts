/**
 * A simulator in a process of its own (simulator-process.ts), for tests that assert timing:
 * inside the vitest worker it would share that process's event loop and garbage collector with
 * the test runner, which delays its admissions by tens of ms under load. Stopped by
 * `stopLineChildren()`.
 */
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import type { FleetFileInput } from '../../src/simulator/schema.js';
import { startLineChild, stopLineChild } from './line-child.js';
import type { SimStats } from './simulator.js';

export interface SeparateSimulator {
  url: string;
  baseUrl: string;
  stats(): Promise<SimStats>;
  /** Stops its process (SIGTERM, SIGKILL after 2 s). */
  close(): Promise<void>;
}

const script = fileURLToPath(new URL('./simulator-process.ts', import.meta.url));

export async function startSeparateSimulator(
  fleet: FleetFileInput,
  timeScale: number,
): Promise<SeparateSimulator> {
  const child = startLineChild(script, { FLEET_JSON: JSON.stringify(fleet), TIME_SCALE: String(timeScale) });
  const { url, baseUrl } = JSON.parse(await child.next()) as { url: string; baseUrl: string };
  return {
    url,
    baseUrl,
    async stats() {
      const res = await request(`${url}/_sim/stats`);
      return (await res.body.json()) as SimStats;
    },
    close: () => stopLineChild(child.child),
  };
}
