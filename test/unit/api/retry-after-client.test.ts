/**
 * A hostile Retry-After (999999 s, a far date, negative, garbage) must not pause every process:
 * the client waits at most 60 s of service time, hands the budget the capped value, logs one
 * line (without secrets) when it capped or ignored a value; the budgets clamp what they are
 * given too, so no caller can pause them all.
 */
import { describe, expect, it } from 'vitest';
import { createMemoryRequestBudget } from '../../../src/api/memory-request-budget.js';
import { createManualClock } from '../../../src/lib/clock.js';
import { json, SECRET, scriptedClient, targets } from './scripted-client.js';

const limited = (retryAfter: string) =>
  json(
    429,
    { id: 'X', errors: [{ code: 'rate.limit.exceeded', message: 'slow down' }] },
    { 'retry-after': retryAfter },
  );

describe('the client with a hostile Retry-After', () => {
  it('waits at most the cap, retries, and logs one line without secrets', async () => {
    const t = scriptedClient([() => limited('999999'), () => targets]);
    expect(await t.client.listTargets()).toHaveLength(1);
    expect(t.clock.sleeps).toEqual([60_000]);
    const lines = t.log.lines().filter((l) => String(l.msg).startsWith('api Retry-After'));
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({ msg: 'api Retry-After capped', retryAfter: '999999', usedMs: 60_000 });
    expect(t.log.text()).not.toContain(SECRET);
  });

  it('ignores (and logs) a negative or unreadable value, keeping its own backoff', async () => {
    const t = scriptedClient([() => limited('-5'), () => limited('x'.repeat(5000)), () => targets]);
    await t.client.listTargets();
    expect(t.clock.sleeps).toEqual([50, 100]); // the jittered backoff alone (random 0.5)
    const lines = t.log.lines().filter((l) => l.msg === 'api Retry-After ignored');
    expect(lines).toHaveLength(2);
    expect(String(lines[1]?.retryAfter).length).toBeLessThanOrEqual(65);
  });

  it('hands the budget the capped value, not the hostile one', async () => {
    const seen: (number | undefined)[] = [];
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 0 });
    budget.rateLimited = async (ms) => void seen.push(ms);
    const t = scriptedClient([() => limited('999999'), () => targets], { budget });
    await t.client.listTargets();
    expect(seen).toEqual([60_000]);
  });
});

describe('the memory budget given a hostile pause', () => {
  it.each([
    [999_999_000, 60_000],
    [Number.POSITIVE_INFINITY, 60_000],
    [Number.NaN, 0],
    [-5_000, 0],
  ])('clamps rateLimited(%d) to a pause of %d ms', async (given, pause) => {
    const clock = createManualClock(1_000);
    const budget = createMemoryRequestBudget({ clock, perSecond: 4, concurrent: 0, maxWaitMs: 120_000 });
    await budget.rateLimited(given);
    let granted = false;
    const lease = budget.acquire().then((l) => {
      granted = true;
      return l;
    });
    for (let i = 0; i < 200 && !granted; i++) {
      await new Promise((r) => setImmediate(r));
      clock.advance(1_000);
    }
    await expect(lease).resolves.toBeDefined();
    expect(clock.now() - 1_000).toBeLessThanOrEqual(pause + 1_000);
  });
});
