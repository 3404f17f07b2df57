/**
 * The simulator of the orgs benchmark in a process of its own (run as `node --import tsx
 * orgs-simulator-process.ts`): the fleet from the JSON file FLEET_FILE (100,000 explicit Collectors
 * are tens of MB, far beyond what an environment variable may hold), on a scaled clock of TIME_SCALE
 * from CLOCK_ORIGIN (wall-clock ms at which the scaled clock read the wall clock), the origin the
 * benchmark also writes as the deployment's clock, so that the simulator's time and the daemon's
 * are one number.
 *
 * Prints one JSON line `{ url, baseUrl, pid, startMs }`, then every LAG_EVERY_MS (default 5000) a
 * line `{ lag: { p50, p99, max } }` with its event-loop delay (ms) since the line before. Stops when
 * its stdin closes or on SIGTERM.
 */
import { readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { createScaledClock } from '../../src/lib/clock.js';
import { startSimulator } from '../../src/simulator/start-simulator.js';

const t0 = performance.now();
const fleet = JSON.parse(readFileSync(String(process.env.FLEET_FILE), 'utf8'));
const clock = createScaledClock(Number(process.env.TIME_SCALE ?? 1), Number(process.env.CLOCK_ORIGIN));
const sim = await startSimulator({ fleet, clock });
const startMs = Math.round(performance.now() - t0);
process.stdout.write(
  `${JSON.stringify({ url: sim.url, baseUrl: sim.baseUrl, pid: process.pid, startMs })}\n`,
);

const lag = monitorEventLoopDelay({ resolution: 10 });
lag.enable();
const ms = (ns: number) => Number((ns / 1e6).toFixed(1));
const timer = setInterval(
  () => {
    process.stdout.write(
      `${JSON.stringify({ lag: { p50: ms(lag.percentile(50)), p99: ms(lag.percentile(99)), max: ms(lag.max) } })}\n`,
    );
    lag.reset();
  },
  Number(process.env.LAG_EVERY_MS ?? 5000),
);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  clearInterval(timer);
  await sim.close();
  process.exit(0);
};
process.stdin.on('end', stop);
process.stdin.resume();
process.on('SIGTERM', stop);
