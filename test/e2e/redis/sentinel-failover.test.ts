/**
 * A rollout on Debian's real Sentinel (a primary, a replica, three sentinels on loopback) while
 * the primary is SIGKILLed twice and the replica promoted each time. Before the first kill,
 * replication is held back, so that a pre-write `creating` made during the hold exists on the
 * killed primary alone: without WAIT the new primary would send that create again. With WAIT
 * (the default behind Sentinel) no create leaves during the hold, and after both failovers:
 * every Collector has an outcome, each the simulator's truth, none has a second task, `run`
 * and `worker` are still running and reconnected by themselves, and the operator commands
 * answer through the sentinels. Needs the built CLI (dist/).
 */
import { describe, expect, it } from 'vitest';
import { runFailoverRollout } from '../../support/failover-rollout.js';

const log = process.env.FAILOVER_LOG ? (line: string) => console.log(line) : undefined;

describe('a rollout on Redis Sentinel through two failovers', () => {
  it('converges to the service truth with no second task, and the processes reconnect by themselves', async () => {
    const result = await runFailoverRollout({
      topology: 'sentinel',
      collectors: 300,
      ...(log ? { log } : {}),
    });
    log?.(
      `failovers ${result.failoverMs.map((ms) => Math.round(ms)).join(', ')} ms (${result.unplannedFailovers} unasked, ${result.resent.length} actions sent again); held back ${result.heldBack}; created during hold ${result.createdDuringHold}; ${Math.round(result.realMs)} ms`,
    );

    expect(result.judgement.notSettled).toEqual([]);
    expect(result.judgement.missing).toEqual([]);
    expect(result.judgement.mismatches).toEqual([]);
    expect(result.judgement.doubleTasks).toEqual([]);
    expect(result.failoverMs).toHaveLength(2);
    // WAIT held every create of the hold back: the replica never acknowledged their pre-writes.
    expect(result.createdDuringHold).toBe(0);
    expect(result.heldBack, 'creates held back for want of an acknowledgement').toBeGreaterThan(0);
    for (const p of result.processes) {
      expect(p.running, `${p.role} still running`).toBe(true);
      expect(p.restored, `${p.role} reconnected by itself`).toBeGreaterThan(0);
    }
    // Work went on after the last failover, through the new primary.
    expect(
      result.processes.reduce((sum, p) => sum + p.createdAfterLastFailover, 0),
      'tasks made after the last failover',
    ).toBeGreaterThan(0);
    // An action undone by a failover it warned of is sent again (failover-rollout.ts): it must work then.
    for (const c of result.resent) expect(c.code, `${c.args.join(' ')} sent again: ${c.output}`).toBe(0);
    const told = result.commands.map((c) => `${c.args.join(' ')} → ${c.code}: ${c.output.trim()}`).join('\n');
    for (const c of result.commands)
      expect(
        c.code,
        `${c.args.join(' ')} (failovers the sentinels made unasked: ${result.unplannedFailovers}); the commands:\n${told}`,
      ).toBe(0);
    expect(result.commands.map((c) => c.args[0])).toEqual([
      'status',
      'pause',
      '(phase after pause)',
      'resume',
      'report',
      'status',
    ]);
  }, 150_000);
});
