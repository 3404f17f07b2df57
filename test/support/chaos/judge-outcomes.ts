/**
 * What the deployment recorded of each Collector, judged against what its organization's
 * simulator knows happened (/_sim/collectors: its tasks, its changes of `alive`, the creates it
 * refused). A record is matched by organization and id (ids repeat across organizations). The
 * deployment and the simulators share one clock, so times compare directly.
 *
 * A recorded outcome agrees when:
 * - succeeded: the last task succeeded and the Collector is on the build;
 * - failed: the last task failed, not by the service's time-out, with the service's message;
 * - timed_out: the last task ended by the service's time-out;
 * - unhealthy: the last task succeeded, and the Collector stopped or went offline between the
 *   task's end and the verdict (it cannot have seen anything later);
 * - not_alive: no task, and the last create the service refused was refused `collector.not.alive`;
 * - error: no task (the creates never got through);
 * - rejected: no task, and the service refused a create with another code than not.alive.
 * A recorded task id must be the last task's. More than one task is a second task in one rollout.
 *
 * Two cases are reported apart, as `unknowable`, because the service never shows its truth. The
 * interface reads a task's status only by its id, and the listings show only that a Collector is
 * not on the build and not upgrading now.
 * - A create that was carried out but whose answer was lost (a dropped connection, then
 *   `collector.in.upgrading` when sent again) has a task whose id nobody knows: the deployment
 *   can tell "it did not reach the build" (`failed`, saying so) but not the service's message,
 *   nor whether the task failed or was timed out.
 * - A create whose answer was lost and that the service never showed to have made a task (the
 *   process was killed while it was on its way, or two answers in a row were lost) cannot be
 *   told from one whose task already ended short of the build. The deployment records it
 *   `unknown` (reconcile-unknown-tasks.ts, UNANSWERED_CREATE; before issue 19 it was `failed`,
 *   now a mismatch): the truth is either no task, or one that did not reach the build.
 * Such records agree only as far as that: no task succeeded, and the Collector is not on the
 * build; anything else is a mismatch.
 */
import { type CollectorRecord, DEFAULT_ORG, isSettled } from '../../../src/rollout/collector/index.js';
import { UNANSWERED_CREATE, UNSEEN_PAST_DEADLINE } from '../../../src/rollout/listings/index.js';
import type { simCollectorRecord } from '../../../src/simulator/introspection-routes.js';

export type SimView = ReturnType<typeof simCollectorRecord>;

export interface Disagreement {
  id: number;
  state: string;
  message?: string;
  why: string;
}

export interface Judgement {
  mismatches: Disagreement[];
  unknowable: Disagreement[];
  /**
   * Collectors with more than one task in the simulator, with the evidence to find out how: the
   * service's tasks (request and finish times, result) and our record's attempts and state.
   */
  doubleTasks: { id: number; tasks: number; evidence?: unknown }[];
  /** Records without an outcome. */
  notSettled: { id: number; state: string }[];
  /** Collectors the rollout should have found, without a record. */
  missing: number[];
}

/** A judgement of several organizations: every entry names its organization. */
export interface OrgsJudgement {
  mismatches: WithOrg<Disagreement>[];
  unknowable: WithOrg<Disagreement>[];
  doubleTasks: WithOrg<Judgement['doubleTasks'][number]>[];
  notSettled: WithOrg<Judgement['notSettled'][number]>[];
  missing: { org: string; id: number }[];
}

type WithOrg<T> = { org: string } & T;

/** One organization as the judge sees it: its simulator's Collectors now, and those the rollout should take. */
export interface OrgTruth {
  org: string;
  sim: ReadonlyMap<number, SimView>;
  expected: ReadonlySet<number>;
}

/**
 * Every record judged against its organization's simulator: the judgement of all (each entry
 * with its organization), and of each organization. A record of an organization that is none of
 * `orgs` is a mismatch.
 */
export function judgeOrgs(
  records: readonly CollectorRecord[],
  orgs: readonly OrgTruth[],
): { all: OrgsJudgement; byOrg: Map<string, Judgement> } {
  const byOrg = new Map<string, Judgement>();
  const all: OrgsJudgement = { mismatches: [], unknowable: [], doubleTasks: [], notSettled: [], missing: [] };
  for (const o of orgs) {
    const j = judgeOutcomes(
      records.filter((r) => (r.org ?? DEFAULT_ORG) === o.org),
      o.sim,
      o.expected,
    );
    byOrg.set(o.org, j);
    const org = o.org;
    all.mismatches.push(...j.mismatches.map((x) => ({ org, ...x })));
    all.unknowable.push(...j.unknowable.map((x) => ({ org, ...x })));
    all.doubleTasks.push(...j.doubleTasks.map((x) => ({ org, ...x })));
    all.notSettled.push(...j.notSettled.map((x) => ({ org, ...x })));
    all.missing.push(...j.missing.map((id) => ({ org, id })));
  }
  const names = new Set(orgs.map((o) => o.org));
  for (const r of records)
    if (!names.has(r.org ?? DEFAULT_ORG))
      all.mismatches.push({
        org: r.org ?? DEFAULT_ORG,
        id: r.id,
        state: r.state,
        why: 'an organization the scenario does not have',
      });
  return { all, byOrg };
}

/** The reconciler's words for a task of unknown id that ended without reaching the build. */
const UNKNOWN_ID_ENDED = 'its task of unknown id ended without reaching the build';

/** The records of one organization judged against its simulator. */
export function judgeOutcomes(
  records: readonly CollectorRecord[],
  sim: ReadonlyMap<number, SimView>,
  expected: ReadonlySet<number>,
): Judgement {
  const out: Judgement = { mismatches: [], unknowable: [], doubleTasks: [], notSettled: [], missing: [] };
  const seen = new Set(records.map((r) => r.id));
  out.missing = [...expected].filter((id) => !seen.has(id)).sort((a, b) => a - b);
  const recordOf = new Map(records.map((r) => [r.id, r]));
  for (const c of sim.values())
    if (c.tasks.length > 1) {
      const r = recordOf.get(c.id);
      out.doubleTasks.push({
        id: c.id,
        tasks: c.tasks.length,
        evidence: {
          service: c.tasks.map((t) => ({
            id: t.id,
            requestTime: t.requestTime,
            finishTime: t.finishTime,
            result: t.result,
            message: t.message,
          })),
          aliveChanges: c.aliveChanges,
          refusals: c.refusals,
          record: r && {
            state: r.state,
            attempts: r.attempts,
            admissions: r.admissions,
            retries: r.retries,
            taskId: r.taskId,
            message: r.message,
            attemptLog: r.attemptLog,
          },
        },
      });
    }
  for (const r of records) {
    if (!isSettled(r.state)) {
      out.notSettled.push({ id: r.id, state: r.state });
      continue;
    }
    const c = sim.get(r.id);
    const verdict = c ? judgeOne(r, c) : { why: 'unknown to the simulator' };
    if (!verdict) continue;
    const entry = { id: r.id, state: r.state, message: r.message, why: verdict.why };
    (verdict.unknowable ? out.unknowable : out.mismatches).push(entry);
  }
  return out;
}

function judgeOne(r: CollectorRecord, c: SimView): { why: string; unknowable?: boolean } | undefined {
  const last = c.tasks.at(-1);
  const seen = `simulator: ${c.tasks.length} task(s), last ${last ? `${last.id} ${last.result ?? 'unfinished'} "${last.message}"` : 'none'}, on ${c.version}`;
  const bad = (why: string) => ({ why: `${why}; ${seen}` });
  if (r.taskId !== undefined && last && String(last.id) !== r.taskId)
    return bad(`recorded task ${r.taskId} is not the last one`);
  switch (r.state) {
    case 'succeeded':
      return last?.result === 'succeeded' && c.version === r.to ? undefined : bad('not a success');
    case 'unknown':
      // Recorded as what it is: the service cannot tell whether the create made a task.
      if (r.taskId === undefined && r.message?.includes(UNANSWERED_CREATE)) {
        if (c.tasks.length > 1 || last?.result === 'succeeded' || last?.result === null || c.version === r.to)
          return bad('a create said to have made no task, or one that ended short of the build');
        return {
          why: last
            ? `recorded unknown: the service ${last.result === 'timedOut' ? 'timed out' : 'failed'} task ${last.id}, whose create's answer was lost`
            : `recorded unknown: the service made no task for it (refusals: ${JSON.stringify(c.refusals.slice(-2))}; a 5xx or 429 is not recorded per Collector)`,
          unknowable: true,
        };
      }
      if (r.taskId === undefined && r.message?.includes(UNSEEN_PAST_DEADLINE)) {
        if (last?.result === 'succeeded' || c.version === r.to) return bad('a task that reached the build');
        return { why: 'recorded unknown: past its deadline, the listings showed nothing', unknowable: true };
      }
      return bad('unknown, although the service showed what happened');
    case 'failed':
      if (r.message?.includes(UNANSWERED_CREATE) && r.taskId === undefined)
        return bad('an unanswered create recorded as a failure: its fate cannot be known (unknown)');
      if (r.message?.includes(UNKNOWN_ID_ENDED) && r.taskId === undefined) {
        if (!last || last.result === 'succeeded' || last.result === null || c.version === r.to)
          return bad('a task of unknown id said to have ended short of the build');
        return {
          why: `the service ${last.result === 'timedOut' ? 'timed it out' : `failed it: "${last.message}"`}; task ${last.id}'s id was never answered`,
          unknowable: true,
        };
      }
      return last?.result === 'failed' && last.message === r.message ? undefined : bad('not this failure');
    case 'timed_out':
      return last?.result === 'timedOut' ? undefined : bad('not timed out by the service');
    case 'unhealthy': {
      if (last?.result !== 'succeeded' || c.version !== r.to) return bad('not a success');
      const from = last.finishTime ?? 0;
      const to = r.finishedAt ?? Number.POSITIVE_INFINITY;
      const within = (at: number) => at >= from && at <= to;
      const lost = c.stops.some((s) => within(s.at)) || c.aliveChanges.some((a) => !a.alive && within(a.at));
      return lost ? undefined : bad(`neither stopped nor offline between ${from} and ${to}`);
    }
    case 'not_alive':
      return c.tasks.length === 0 && c.refusals.at(-1)?.code === 'collector.not.alive'
        ? undefined
        : bad(`refusals ${JSON.stringify(c.refusals.slice(-3))}`);
    case 'error':
      return c.tasks.length === 0 ? undefined : bad('a task exists');
    case 'rejected':
      return c.tasks.length === 0 &&
        c.refusals.some((x) => x.code !== 'collector.not.alive' && x.code !== 'collector.in.upgrading')
        ? undefined
        : bad(`refusals ${JSON.stringify(c.refusals.slice(-3))}`);
    default:
      return bad(`an outcome this policy never leads to: ${r.state}`);
  }
}
