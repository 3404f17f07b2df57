/**
 * Issue 25's set-up, as a new user makes it: Debian's redis-server, a primary and a replica with
 * `appendonly yes` and `appendfsync everysec` and no password, three sentinels with
 * `down-after-milliseconds 1000`, `failover-timeout 4000`, quorum 2; `run --once` alone, given
 * only REDIS_SENTINELS and REDIS_SENTINEL_NAME; 300 Collectors, `maxInFlight: 20`, ×60, the
 * simulator at 4 requests/s with 1 % of answers 5xx. The primary is SIGKILLed mid-rollout, and
 * once the replica is promoted the killed one is started again as it was configured (a primary
 * with old data, until the sentinels make it a replica); later the same again. Before issue 25,
 * `run` died with exit 1 within 40 s of the first kill (its watch of the rollouts failed on one
 * command given up during the failover). Now: `run --once` ends 0 or 2 by itself, the rollout
 * converged, every outcome the simulator's, no second task, the in-flight limit held, and no
 * unhandled error in its log. Needs the built CLI (dist/).
 */
import { describe, expect, it } from 'vitest';
import { runFailoverRollout } from '../../support/failover-rollout.js';

const log = process.env.FAILOVER_LOG ? (line: string) => console.log(line) : undefined;

describe('run --once on a new user’s Sentinel through two failovers', () => {
  it('ends 0 or 2 by itself, converged to the service truth, no second task, the limit held', async () => {
    const result = await runFailoverRollout({
      topology: 'sentinel',
      collectors: 300,
      password: false,
      failoverTimeoutMs: 4000,
      once: true,
      workers: 0,
      hold: false,
      rejoin: 'plain',
      timeScale: 60,
      maxInFlight: 20,
      simFaults: { rateLimit: { perSecond: 4, concurrent: 10 }, errorRatio: 0.01 },
      commands: false,
      convergeMs: 120_000,
      ...(log ? { log } : {}),
    });
    log?.(
      `failovers ${result.failoverMs.map((ms) => Math.round(ms)).join(', ')} ms; ${Math.round(result.realMs)} ms; counts ${JSON.stringify(result.counts)}`,
    );
    const run = result.processes[0];
    expect(run?.role).toBe('run');
    expect(run?.unhandled, run?.output.slice(-4000)).toEqual([]);
    expect([0, 2], `run --once ended ${run?.exitCode}:\n${run?.output.slice(-4000)}`).toContain(
      run?.exitCode,
    );
    expect(result.failoverMs).toHaveLength(2);
    expect(result.judgement.notSettled).toEqual([]);
    expect(result.judgement.missing).toEqual([]);
    expect(result.judgement.mismatches).toEqual([]);
    expect(result.judgement.doubleTasks).toEqual([]);
    expect(result.maxConcurrentTasks).toBeLessThanOrEqual(20);
  }, 240_000);
});
