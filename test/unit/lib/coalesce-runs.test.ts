/**
 * One run at a time, callers during a run sharing the next (src/lib/coalesce-runs.ts): what the
 * watching pass's admissions between pages rely on (tick/watch-step.ts) — ten organizations'
 * pages asking at once cost one admission more, not ten, and none is served by a run that began
 * before it asked.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { coalesceRuns } from '../../../src/lib/coalesce-runs.js';

/** A run the test ends by hand, numbered in the order they start. */
function heldWork() {
  const started: { n: number; end: (fail?: boolean) => void }[] = [];
  let running = 0;
  let most = 0;
  const work = () =>
    new Promise<number>((resolve, reject) => {
      const n = started.length + 1;
      running++;
      most = Math.max(most, running);
      let ended = false;
      started.push({
        n,
        end: (fail) => {
          if (ended) return;
          ended = true;
          running--;
          if (fail) reject(new Error(`run ${n} failed`));
          else resolve(n);
        },
      });
    });
  return { work, started, most: () => most };
}

const settle = () => new Promise<void>((r) => setImmediate(r));

describe('coalesceRuns', () => {
  it('callers while a run goes on share one run after it, which each of them waits for', async () => {
    const h = heldWork();
    const admit = coalesceRuns(h.work);
    const first = admit();
    await settle();
    expect(h.started).toHaveLength(1);
    // Nine organizations' pages ask while the first admission runs.
    const later = Array.from({ length: 9 }, () => admit());
    await settle();
    expect(h.started).toHaveLength(1);
    h.started[0]?.end();
    expect(await first).toBe(1);
    await settle();
    expect(h.started).toHaveLength(2);
    h.started[1]?.end();
    expect(await Promise.all(later)).toEqual(Array(9).fill(2));
    // Idle again: the next caller starts a run at once.
    const again = admit();
    await settle();
    h.started[2]?.end();
    expect(await again).toBe(3);
    expect(h.most()).toBe(1);
  });

  it('a failed run fails its callers only; those waiting get the next run', async () => {
    const h = heldWork();
    const admit = coalesceRuns(h.work);
    const first = admit();
    await settle();
    const waiting = admit();
    h.started[0]?.end(true);
    await expect(first).rejects.toThrow('run 1 failed');
    await settle();
    h.started[1]?.end();
    expect(await waiting).toBe(2);
  });

  it('any order of calls and ends: never two runs at once, every caller served by a run that started after its call, at most one run more than the first per run', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.boolean(), { minLength: 1, maxLength: 60 }), async (steps) => {
        const h = heldWork();
        const admit = coalesceRuns(h.work);
        const calls: { startedBefore: number; result: Promise<number> }[] = [];
        // true: a page asks; false: the run under way (if any) ends.
        for (const ask of steps) {
          if (ask) calls.push({ startedBefore: h.started.length, result: admit() });
          else h.started.at(-1)?.end();
          await settle();
        }
        // Then every run ends, until every caller is served.
        for (let i = 0; i < 3; i++) {
          h.started.at(-1)?.end();
          await settle();
        }
        const served = await Promise.all(calls.map((c) => c.result));
        expect(h.most()).toBeLessThanOrEqual(1);
        served.forEach((n, i) => {
          expect(n).toBeGreaterThan(calls[i]?.startedBefore ?? 0);
        });
        // No more runs than callers (fewer when callers came during a run).
        expect(h.started.length).toBeLessThanOrEqual(calls.length);
      }),
      { numRuns: 200 },
    );
  });
});
