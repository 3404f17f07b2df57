/**
 * OrgFaults, the faults an organization suffers over simulated time, against a plain reading of
 * its rules: a fault of a kind is in force at t exactly when a window of that kind covers t
 * (since <= t < until); a runtime one wins over a scheduled one; ending faults at t leaves none
 * in force at t and spares the windows still to come.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { FAULT_KINDS, type ScheduledFault } from '../../../src/simulator/fault-schema.js';
import { OrgFaults } from '../../../src/simulator/org-faults.js';

const START = 1_700_000_000_000;

const kind = fc.constantFrom(...FAULT_KINDS);
const window = fc.record({
  kind,
  from: fc.integer({ min: 0, max: 600 }),
  for: fc.option(fc.integer({ min: 1, max: 600 }), { nil: undefined }),
});
/** A schedule of windows, each with the fields its kind requires (defaults filled in as the schema does). */
const schedule = fc.array(window, { maxLength: 8 }).map((ws) =>
  ws.map((w): ScheduledFault => {
    const base = { from: w.from, ...(w.for === undefined ? {} : { for: w.for }) };
    const params: Record<(typeof FAULT_KINDS)[number], object> = {
      outage: { mode: 'unavailable' },
      unauthorized: {},
      rateLimitStorm: { ratio: 0.9 },
      slow: { latencyMs: w.from },
      malformed: { ratio: 0.5 },
    };
    return { kind: w.kind, ...params[w.kind], ...base } as ScheduledFault;
  }),
);
const second = fc.integer({ min: 0, max: 1300 });

const covers = (w: ScheduledFault, s: number) => w.from <= s && (w.for === undefined || s < w.from + w.for);

describe('OrgFaults', () => {
  it('a kind is in force exactly when one of its windows covers the instant', () => {
    fc.assert(
      fc.property(schedule, second, (ws, s) => {
        const faults = new OrgFaults(ws, START);
        for (const k of FAULT_KINDS) {
          const expected = ws.some((w) => w.kind === k && covers(w, s));
          expect(faults.active(k, START + s * 1000) !== undefined).toBe(expected);
        }
        expect(faults.list(START + s * 1000)).toHaveLength(ws.filter((w) => covers(w, s)).length);
      }),
    );
  });

  it('of several in force, the one begun last gives the parameters', () => {
    fc.assert(
      fc.property(schedule, second, (ws, s) => {
        const slow = ws.filter((w) => w.kind === 'slow' && covers(w, s));
        const latest = Math.max(...slow.map((w) => w.from));
        const got = new OrgFaults(ws, START).active('slow', START + s * 1000);
        expect(got?.latencyMs).toBe(slow.length > 0 ? latest : undefined);
      }),
    );
  });

  it('a runtime fault wins over a scheduled one of its kind, until its forSeconds are over', () => {
    fc.assert(
      fc.property(schedule, second, fc.integer({ min: 1, max: 300 }), (ws, s, lasting) => {
        const faults = new OrgFaults(ws, START);
        const at = START + s * 1000;
        faults.switchOn({ kind: 'slow', latencyMs: 12_345, forSeconds: lasting }, at);
        expect(faults.active('slow', at)?.latencyMs).toBe(12_345);
        expect(faults.active('slow', at + lasting * 1000 - 1)?.latencyMs).toBe(12_345);
        expect(faults.active('slow', at + lasting * 1000)?.latencyMs).not.toBe(12_345);
      }),
    );
  });

  it('ending at t: nothing of that kind in force at t or later from what was in force; windows to come keep their turn', () => {
    fc.assert(
      fc.property(schedule, second, fc.option(kind, { nil: undefined }), (ws, s, k) => {
        const faults = new OrgFaults(ws, START);
        const at = START + s * 1000;
        faults.switchOn({ kind: 'unauthorized' }, at);
        faults.end(at, k);
        for (const each of FAULT_KINDS) {
          const endedKind = k === undefined || k === each;
          const later = ws.some((w) => w.kind === each && w.from > s);
          if (endedKind) expect(faults.active(each, at)).toBeUndefined();
          if (endedKind && later) {
            const next = Math.min(...ws.filter((w) => w.kind === each && w.from > s).map((w) => w.from));
            expect(faults.active(each, START + next * 1000)).toBeDefined();
          }
        }
        expect(faults.upcoming(at)).toHaveLength(ws.filter((w) => w.from > s).length);
      }),
    );
  });
});
