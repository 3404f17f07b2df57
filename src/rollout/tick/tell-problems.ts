/**
 * A step of the scheduler's round: the daemon's own problems (problems/: an invalid policy file,
 * a target the service does not offer, a ring no file defines, a time scale that is not the
 * simulator's) that have lasted PROBLEM_TOLD_AFTER_MS are told as `daemon.problem` events, and
 * their end as `daemon.problem_ended`, through the rollouts' one write path (history and outbox:
 * webhooks, chat, PagerDuty trigger and resolve).
 *
 * An event belongs to a rollout: a problem that names a policy (its `policy`, the policy its
 * invalid file keeps in force, or the policy that is its subject) is told in that policy's
 * current rollout (whatever its phase: a target not offered leaves the last one converged); a problem of no policy with a rollout (the time scale, a file that keeps no
 * policy, a policy not started yet) in every live rollout (running, paused or halted). With no
 * such rollout it is not told (logged; `status` shows it). The leader tells; what it told is held
 * in memory: after a restart a problem that lasts is told again once it has lasted 5 minutes
 * (PagerDuty's dedup_key makes that the same incident).
 *
 *   problem (since) ──5 min──► told ──cleared──► ended told (in the same rollouts)
 */
import type { Logger } from '../../lib/logger.js';
import type { RolloutRecord, RolloutStore } from '../life/index.js';
import type { DaemonProblem } from '../problems/index.js';

/** Clock ms a problem lasts before it is told. */
export const PROBLEM_TOLD_AFTER_MS = 5 * 60_000;

const LIVE = new Set(['running', 'paused', 'halted']);

interface Told {
  problem: DaemonProblem;
  rollouts: RolloutRecord[];
}

export class ProblemTeller {
  private readonly told = new Map<string, Told>();
  private readonly untold = new Set<string>();

  constructor(private readonly deps: { rollouts: Pick<RolloutStore, 'write'>; logger: Logger }) {}

  /** Tells what lasted long enough and what ended, given the problems now and the current rollouts. */
  async step(problems: readonly [string, DaemonProblem][], current: readonly RolloutRecord[], now: number) {
    const open = new Map(problems);
    for (const [id, problem] of open) {
      if (this.told.has(id) || now - problem.since < PROBLEM_TOLD_AFTER_MS) continue;
      const rollouts = rolloutsOf(problem, current);
      if (rollouts.length === 0) {
        if (!this.untold.has(id))
          this.deps.logger.warn(
            { kind: problem.kind, subject: problem.subject },
            'a daemon problem lasted 5 minutes; no live rollout to tell it in (status shows it)',
          );
        this.untold.add(id);
        continue;
      }
      this.untold.delete(id);
      await this.tell(rollouts, problem, 'daemon.problem', now);
      this.told.set(id, { problem, rollouts });
    }
    for (const [id, told] of [...this.told]) {
      if (open.has(id)) continue;
      this.told.delete(id);
      await this.tell(told.rollouts, told.problem, 'daemon.problem_ended', now);
    }
    for (const id of [...this.untold]) if (!open.has(id)) this.untold.delete(id);
  }

  private async tell(
    rollouts: readonly RolloutRecord[],
    p: DaemonProblem,
    type: 'daemon.problem' | 'daemon.problem_ended',
    now: number,
  ): Promise<void> {
    const facts = { kind: p.kind, subject: p.subject, reason: p.reason, fix: p.fix, since: p.since };
    for (const r of rollouts)
      await this.deps.rollouts.write(r, { news: [{ type, source: 'scheduler', ...facts }] }, now);
  }
}

/** The rollouts a problem is told in: its policy's current one, else every live one. */
function rolloutsOf(p: DaemonProblem, current: readonly RolloutRecord[]): RolloutRecord[] {
  const policy = p.policy ?? p.keeping ?? (p.kind === 'policy_invalid' ? undefined : p.subject);
  const own = current.filter((r) => r.policy === policy);
  return own.length ? own : current.filter((r) => LIVE.has(r.phase));
}
