/**
 * A simulator in a process of its own, so that the process measuring the daemon holds only the
 * daemon (its memory and event loop are then the daemon's). Run as
 * `node --import tsx bench/lib/simulator-child.ts` with FLEET_JSON and TIME_SCALE in the
 * environment; prints one JSON line `{ url, baseUrl, pid, startMs }` and stops when its stdin
 * closes or on SIGTERM.
 */
import { startSimulator } from '../../src/simulator/start-simulator.js';

const t0 = performance.now();
const sim = await startSimulator({
  fleet: JSON.parse(process.env.FLEET_JSON ?? '{}'),
  timeScale: Number(process.env.TIME_SCALE ?? 1),
});
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
