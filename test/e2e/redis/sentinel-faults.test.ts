/**
 * Issue 25, part 2: every Redis client of every process survives what a replicated Redis does to
 * it. During a rollout driven by `run` and two `worker`s through Sentinel (Debian's redis-server
 * on loopback), every client connection is killed at random moments (`CLIENT KILL TYPE normal`
 * on the primary, 1 to 3 s apart: the product's connections, BullMQ's, the budget's, the
 * notifier's, the inventory's), the primary is restarted in place once, and the sentinels fail
 * over twice (the primary SIGKILLed, its replica promoted). At the end every process is still
 * running, every outcome is the simulator's, no Collector has a second task, and no process
 * logged an error nobody handled (guard-daemon.ts logs each as `unhandled error`). Needs the
 * built CLI (dist/).
 */
import { describe, expect, it } from 'vitest';
import { runFailoverRollout } from '../../support/failover-rollout.js';

const log = process.env.FAILOVER_LOG ? (line: string) => console.log(line) : undefined;

describe('a rollout through dropped connections, a Redis restart and two failovers', () => {
  it('keeps every process running, with the service truth, no second task and nothing unhandled', async () => {
    const result = await runFailoverRollout({
      topology: 'sentinel',
      collectors: 300,
      workers: 2,
      hold: false,
      faults: { clientKills: 12, restart: true },
      commands: false,
      convergeMs: 120_000,
      ...(log ? { log } : {}),
    });
    log?.(
      `faults ${JSON.stringify(result.faults)}; failovers ${result.failoverMs.map((ms) => Math.round(ms)).join(', ')} ms; ${Math.round(result.realMs)} ms`,
    );
    expect(result.faults.clientKills, 'CLIENT KILLs done').toBeGreaterThan(0);
    expect(result.faults.restarts).toBe(1);
    expect(result.failoverMs).toHaveLength(2);
    for (const p of result.processes) {
      expect(p.unhandled, `${p.role}: ${p.unhandled.join('\n')}`).toEqual([]);
      expect(p.running, `${p.role} still running:\n${p.output.slice(-3000)}`).toBe(true);
    }
    expect(result.judgement.notSettled).toEqual([]);
    expect(result.judgement.missing).toEqual([]);
    expect(result.judgement.mismatches).toEqual([]);
    expect(result.judgement.doubleTasks).toEqual([]);
  }, 240_000);
});
