/**
 * The simulator in a process of its own (run as `node --import tsx simulator-process.ts`), for
 * tests that measure timing: inside a vitest worker it would share that process's event loop and
 * garbage collector with the test runner; and for the benchmarks (bench/lib/spawn-simulator.ts),
 * whose process then holds only the daemon. Reads FLEET_JSON and TIME_SCALE from its environment,
 * prints one JSON line `{ url, baseUrl, pid, startMs }`, and stops when its stdin closes or on
 * SIGTERM.
 */
import { startSimulator } from '../../src/simulator/start-simulator.js';

const t0 = performance.now();
const fleet = JSON.parse(process.env.FLEET_JSON ?? '{}');
const sim = await startSimulator({ fleet, timeScale: Number(process.env.TIME_SCALE ?? 1) });
const startMs = Math.round(performance.now() - t0);
process.stdout.write(
  `${JSON.stringify({ url: sim.url, baseUrl: sim.baseUrl, pid: process.pid, startMs })}\n`,
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  await sim.close();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
