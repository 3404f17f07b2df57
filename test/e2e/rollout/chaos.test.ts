/**
 * The chaos test of issue 12, small enough for `npm test` (the full one: `npm run bench -- chaos`):
 * 200 Collectors on the simulator with every fault (5xx, connections dropped after the request
 * was carried out, 429 bursts, flapping, offline, stuck and failing Collectors), `run` and three
 * `worker` processes of the built CLI on one Redis with append-only persistence, eight SIGKILLs
 * during the rollout (one of redis-server, started again from its AOF). Afterwards every
 * Collector has an outcome equal to the simulator's truth, none has a second task, the service
 * never saw more than maxInFlight tasks at once, and the access key shows nowhere.
 */
import { describe, expect, it } from 'vitest';
import { chaosViolations } from '../../support/chaos/chaos-figures.js';
import { formatChaos } from '../../support/chaos/format-chaos.js';
import { runChaos } from '../../support/chaos/run-chaos.js';

describe('chaos: SIGKILLs of every process and of Redis, with every fault of the service', () => {
  it('leaves every outcome equal to the simulator’s, one task per Collector, maxInFlight kept, no secret anywhere', async () => {
    const maxInFlight = 25;
    const f = await runChaos({
      collectors: 200,
      kills: 8,
      timeScale: 40,
      seed: 12,
      maxInFlight,
      meanKillGapMs: 5000,
      deadlineMs: 180_000,
    });
    const table = formatChaos(f, chaosViolations(f));
    console.log(table);
    const j = f.judgement;
    expect(f.converged, table).toBe(true);
    // The chaos happened, during the rollout.
    expect(f.processKills).toBe(7);
    expect(f.redisKills).toBe(1);
    const redisKill = f.kills.find((k) => k.target === 'redis-server');
    expect(redisKill?.done ?? f.expected, 'Redis killed mid-rollout').toBeLessThan(f.expected);
    expect(f.simulator.injectedErrors).toBeGreaterThan(0);
    expect(f.simulator.dropped).toBeGreaterThan(0);
    expect(f.neighbour.rateLimited).toBeGreaterThan(0);
    expect(f.rateLimitedDeployment, 'the deployment met the 429 bursts').toBeGreaterThan(0);
    // Every Collector has an outcome, and it is the simulator's.
    expect(f.records).toBe(f.expected);
    expect(j.missing).toEqual([]);
    expect(j.notSettled).toEqual([]);
    expect(j.mismatches, table).toEqual([]);
    for (const u of j.unknowable) expect(u.state).toBe('failed');
    // Every kind of outcome the fleet holds was reached (and so checked).
    expect(Object.keys(f.outcomes)).toEqual(
      expect.arrayContaining(['succeeded', 'failed', 'timed_out', 'not_alive']),
    );
    expect(j.doubleTasks).toEqual([]);
    expect(f.maxConcurrentTasks).toBeLessThanOrEqual(maxInFlight);
    expect(f.reportRows).toBe(f.records);
    // The secret nowhere, and each place was looked at.
    expect(f.secret.hits).toEqual([]);
    expect(f.secret.logLines).toBeGreaterThan(100);
    expect(f.secret.metricsScrapes).toBeGreaterThan(4);
    expect(f.secret.statusScrapes).toBeGreaterThan(0);
    expect(f.secret.reportBytes).toBeGreaterThan(0);
    expect(f.secret.redisValues).toBeGreaterThan(f.records);
    expect(f.secret.aofBytes).toBeGreaterThan(0);
    expect(chaosViolations(f)).toEqual([]);
  }, 300_000);
});
