/**
 * A watching pass over several organizations (tick/watch-step.ts), through the scheduler on a
 * real Redis and BullMQ queue, the listings stubbed per organization: each organization's pages
 * are walked at once, and the slots a page shows freed are filled before the next page. The
 * admission between pages fills every organization's freed slots, so the pages that ask while
 * one runs share the next one: at 10 × 10,000 the pages of ten organizations taking turns queued
 * ~60 admissions per pass, most of a 40–60 s pass (docs/benchmarks.md, #31).
 */
import { describe, expect, it } from 'vitest';
import { collectorKey, transition } from '../../../src/rollout/collector/index.js';
import { settingsOf } from '../../../src/rollout/tick/index.js';
import { BUILD, collector, OLD, useSchedulerHarness } from '../../support/scheduler-harness.js';

const setup = useSchedulerHarness();
const ORGS = ['org-a', 'org-b', 'org-c', 'org-d', 'org-e'];
/** Collectors per organization under way at once, and waiting; the listing's page size. */
const PER_ORG = 20;
const WAITING = 10;
const PAGE = 10;

/** Resolves each caller of round `index` once every organization's listing has reached it. */
function pagesTogether(orgs: number) {
  const rounds = new Map<number, { arrived: number; all: Promise<void>; release: () => void }>();
  return (index: number) => {
    let round = rounds.get(index);
    if (!round) {
      let release = () => {};
      const all = new Promise<void>((r) => {
        release = r;
      });
      round = { arrived: 0, all, release };
      rounds.set(index, round);
    }
    round.arrived++;
    if (round.arrived === orgs) round.release();
    return round.all;
  };
}

describe('a watching pass over several organizations', () => {
  it('the pages of five organizations that show tasks ended at once share admissions, and the pass fills every freed slot', async () => {
    const s = await setup(
      { maxInFlight: ORGS.length * PER_ORG, maxInFlightPerOrg: PER_ORG, pageSize: PAGE },
      { orgs: ORGS },
    );
    // Each organization: PER_ORG Collectors under way, and WAITING more.
    ORGS.forEach((org, o) => {
      for (let i = 0; i < PER_ORG + WAITING; i++) {
        const id = 1000 * (o + 1) + i;
        s.fleet.set(id, collector(id));
        s.orgOf.set(id, org);
      }
    });
    await s.tick();
    const rolloutId = await s.rolloutId();
    expect(await s.counts()).toMatchObject({
      admitted: ORGS.length * PER_ORG,
      queued: ORGS.length * WAITING,
    });
    // Their tasks are created (as the worker does); a Collector is not listed while its task runs.
    const settings = settingsOf(s.policy);
    const admitted = [...s.fleet.keys()].filter((id) => id % 1000 < PER_ORG);
    for (const id of admitted) {
      const key = collectorKey(s.orgOf.get(id), id);
      let r = await s.store.get(rolloutId, key);
      for (const event of [
        { type: 'send' },
        { type: 'created', taskId: `t${id}`, requestTime: s.clock.now(), createdBy: 'test' },
      ] as const) {
        if (!r) throw new Error(`no record of ${key}`);
        const t = transition(r, event, { now: s.clock.now(), settings });
        if (!t.ok) throw new Error(t.reason);
        expect(await s.store.apply(rolloutId, [t.move], { limit: 1_000_000 })).toEqual(['written']);
        r = t.move.next;
      }
    }
    // Every task ends on the build: the listing of the old build shows them all, PAGE a page. The
    // next watching pass is due by then (at the latest a fifth of the median task after the first).
    s.clock.advance(2 * 60_000);
    const before = s.log.lines().length;
    for (const id of admitted) s.fleet.set(id, collector(id, { collectorVersion: BUILD }));
    const together = pagesTogether(ORGS.length);
    s.beforePage = async (index, toVersion) => {
      if (toVersion === OLD) await together(index);
    };
    await s.tick();
    const walked = s.log
      .lines()
      .slice(before)
      .filter((l) => l.msg === 'watching pass walked');
    expect(walked).toHaveLength(1);
    const pass = walked[0] as { pages: number; admissions: number };
    expect(pass.pages).toBe(ORGS.length * (PER_ORG / PAGE));
    // Taking turns, every page that showed ends had an admission of its own (10 here); shared, a
    // round of pages costs the admission under way and the one after it.
    expect(pass.admissions).toBeLessThanOrEqual(2 * (PER_ORG / PAGE));
    // Every freed slot was filled by the pass: nobody waits.
    const counts = await s.counts();
    expect(counts.queued ?? 0).toBe(0);
    expect(counts.admitted).toBe(ORGS.length * WAITING);
  });
});
