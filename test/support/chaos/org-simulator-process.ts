/**
 * One organization's simulator in a process of its own (run as `node --import tsx
 * org-simulator-process.ts`), on the chaos scenario's shared clock: FLEET_JSON, TIME_SCALE and
 * CLOCK_ORIGIN (wall-clock ms at which the scaled clock read the wall clock) from its environment,
 * so that its time, the other simulators' and the deployment's are one number. Prints one JSON
 * line `{ url, baseUrl, pid }`; stops when its stdin closes or on SIGTERM.
 */
import { createScaledClock } from '../../../src/lib/clock.js';
import { startSimulator } from '../../../src/simulator/start-simulator.js';

const fleet = JSON.parse(process.env.FLEET_JSON ?? '{}');
const clock = createScaledClock(Number(process.env.TIME_SCALE ?? 1), Number(process.env.CLOCK_ORIGIN));
const sim = await startSimulator({ fleet, clock });
process.stdout.write(`${JSON.stringify({ url: sim.url, baseUrl: sim.baseUrl, pid: process.pid })}\n`);

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
