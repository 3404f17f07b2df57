/**
 * A rollout on a real Redis Cluster of Debian's redis-server (three primaries with a replica
 * each, on loopback) while the primary of the deployment's slot is SIGKILLed and its replica
 * takes the slot over. Every key of the deployment shares one hash tag, so the Lua scripts and
 * BullMQ's queue run on that one slot: the Cluster gives availability here, not sharding. After
 * the failover: every Collector has an outcome, each the simulator's truth, none has a second
 * task, `run` and `worker` are still running and reconnected by themselves, and the operator
 * commands answer through the Cluster. Needs the built CLI (dist/).
 */
import { describe, expect, it } from 'vitest';
import { runFailoverRollout } from '../../support/failover-rollout.js';

const log = process.env.FAILOVER_LOG ? (line: string) => console.log(line) : undefined;

describe('a rollout on Redis Cluster through the failover of its slot’s primary', () => {
  it('converges to the service truth with no second task, and the processes reconnect by themselves', async () => {
    const result = await runFailoverRollout({ topology: 'cluster', ...(log ? { log } : {}) });
    log?.(
      `failover ${result.failoverMs.map((ms) => Math.round(ms)).join(', ')} ms; ${result.tasksCreated} tasks; ${Math.round(result.realMs)} ms`,
    );

    expect(result.judgement.notSettled).toEqual([]);
    expect(result.judgement.missing).toEqual([]);
    expect(result.judgement.mismatches).toEqual([]);
    expect(result.judgement.doubleTasks).toEqual([]);
    expect(result.failoverMs).toHaveLength(1);
    for (const p of result.processes) {
      expect(p.running, `${p.role} still running`).toBe(true);
      expect(p.restored, `${p.role} reconnected by itself`).toBeGreaterThan(0);
    }
    expect(result.processes.reduce((sum, p) => sum + p.createdAfterLastFailover, 0)).toBeGreaterThan(0);
    for (const c of result.commands) expect(c.code, `${c.args.join(' ')}: ${c.output}`).toBe(0);
    expect(result.commands.map((c) => c.args[0])).toEqual([
      'status',
      'pause',
      '(phase after pause)',
      'resume',
      'report',
      'status',
    ]);
  }, 120_000);
});
