/**
 * How long an upgrade takes, read from the model itself (no HTTP): with fixed step durations,
 * a task from build i to build j takes issueSeconds, then the wait for the Collector's next
 * heartbeat, then one step per increment: ceil(|j - i| / incrementalAbove) steps (one step when
 * incrementalAbove is 0 or the distance is within it), each the step duration of the
 * Collector's OS (`byOs`), else the default.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FleetModel } from '../../../src/simulator/fleet-model.js';
import { FleetFile } from '../../../src/simulator/schema.js';

const BUILDS = Array.from({ length: 8 }, (_, i) => `19.${100 + i * 10}-1`);
const START = 1_700_000_000_000;

describe('task duration = issue + heartbeat wait + steps × step duration', () => {
  it('for any pair of builds, incrementalAbove, and OS', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 7 }),
        fc.integer({ min: 0, max: 4 }),
        fc.constantFrom('Linux', 'Windows Server 2022', 'Mac OS X'),
        fc.integer({ min: 1, max: 120 }),
        fc.integer({ min: 1, max: 60 }),
        (from, to, inc, osName, linuxStep, heartbeat) => {
          fc.pre(from !== to);
          const fleet = FleetFile.parse({
            builds: BUILDS,
            collectors: [{ id: 1, version: BUILDS[from], osName, outcome: 'succeed' }],
            behaviour: {
              issueSeconds: 2,
              heartbeatSeconds: heartbeat,
              incrementalAbove: inc,
              taskTimeoutSeconds: 1e9,
              upgradeSeconds: {
                median: linuxStep,
                p95: linuxStep,
                byOs: { 'Windows Server 2022': { median: linuxStep * 4, p95: linuxStep * 4 } },
              },
            },
          });
          const model = new FleetModel(fleet, START);
          const created = model.create(1, BUILDS[to] as string, 'ops', () => true, START);
          if (!created.ok) throw new Error(created.message);
          model.advance(START + 1e12);
          const task = created.task;
          const distance = Math.abs(to - from);
          const steps = inc === 0 || distance <= inc ? 1 : Math.ceil(distance / inc);
          expect(task.steps).toHaveLength(steps);
          expect(task.steps.at(-1)).toBe(BUILDS[to]);
          const step = osName === 'Windows Server 2022' ? linuxStep * 4 : linuxStep;
          const c = model.collector(1);
          expect(c && model.stepDuration(c)).toMatchObject({
            kind: osName === 'Windows Server 2022' ? 'os' : 'default',
            median: step,
          });
          const took = ((task.finishTime ?? 0) - task.requestTime) / 1000;
          const fixed = 2 + steps * step;
          expect(took).toBeGreaterThan(fixed - 0.01);
          expect(took).toBeLessThanOrEqual(fixed + heartbeat + 0.01);
        },
      ),
    );
  });
});
