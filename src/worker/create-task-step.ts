/**
 * The create step: `admitted` → `creating` (written with the time it is sent, once the API budget
 * lets it go: while it waits for the budget it stays `admitted`, so a process killed then leaves
 * no create of unknown outcome) → confirmed on the replicas when the deployment asks for it
 * (WAIT, lib/redis/replica-wait.ts: a failover must not lose the pre-write of a create that went
 * out; unconfirmed, the create is not sent and the record goes back to `waiting_retry`, or, for
 * a create sent again, to `reconciling`) → the service's answer, turned into an event of the
 * Collector's state machine:
 * - 202 with a task id → `created` (pending);
 * - collector.not.alive → `not_alive` (waits for a retry, or ends not_alive);
 * - collector.in.upgrading, a 202 whose id cannot be read, or no answer twice → `task_unknown`
 *   (reconciling: the scheduler resolves it from the listings);
 * - the other vendor codes → `rejected`;
 * - any other error answer → `create_error`: transient (5xx, 429, network) or not (401, 403,
 *   other 4xx, unreadable); each waits for a retry through the admitter with a growing
 *   back-off, and ends the Collector `error` after the policy's bounded number of them.
 */
import { hostname } from 'node:os';
import { ApiError, type CreateTaskResult } from '../api/index.js';
import { FleetError } from '../lib/errors.js';
import type { WriteMark } from '../lib/redis/replica-wait.js';
import { type CollectorRecord, keyOf, orgOf, orgProblemOf } from '../rollout/index.js';
import { nextPollDelay, watchedDelay } from './poll-schedule.js';
import { apiOf, done, retryReasonOf, type Step, type StepContext, TRANSIENT_KINDS } from './step-context.js';

const PROCESS_NAME = `${hostname()}:${process.pid}`;

/**
 * Clock ms until the next status read of a task `elapsedMs` after its request; `watched`: whether
 * the rollout watches its tasks (default: as the step found the rollout).
 */
export function pollDelay(
  ctx: StepContext,
  elapsedMs: number,
  watched = ctx.rollout.watchMs !== undefined,
): number {
  const { settings } = ctx;
  // The scheduler watches the listings for this rollout's tasks and wakes the job when its task
  // ends (listing-pass.ts): sleep, reading once in a while in case nobody watches any more.
  if (watched) return watchedDelay(settings.taskTimeoutMs, elapsedMs);
  return nextPollDelay({
    elapsedMs,
    firstReadMs: ctx.rollout.firstPollMs,
    settings: { initialMs: settings.pollInitialMs, maxMs: settings.pollMaxMs, jitter: settings.pollJitter },
    deadlineMs: settings.taskTimeoutMs,
    random: ctx.deps.random ?? Math.random,
  });
}

/** `creating` could not be written (the record moved on): the create is not sent. */
class CreateNotSent extends Error {}

/** `creating` was written but the replicas did not confirm it: the create is not sent. */
class PreWriteNotDurable extends Error {
  constructor(
    reason: string,
    /** The write was a `resend`: a create went out before, unanswered. */
    readonly resent: boolean,
  ) {
    super(reason);
  }
}

export async function createTaskStep(ctx: StepContext, resend: boolean): Promise<Step> {
  const { deps, record, log } = ctx;
  const counters = { createRequests: 1 };
  const pickedAt = deps.clock.now();
  // Before each attempt goes out: `send` from admitted (with when the job was taken up: what it
  // waited for the budget is the rest), `resend` (the time it is sent) after.
  const beforeSend = async () => {
    const mark = deps.replicaWait?.mark();
    const resent = ctx.record.state !== 'admitted';
    const sent = await ctx.apply(resent ? { type: 'resend' } : { type: 'send', pickedAt });
    if (!sent) throw new CreateNotSent();
    if (!mark || !deps.replicaWait) return;
    const durable = await deps.replicaWait.confirm(mark);
    if (!durable.ok) throw new PreWriteNotDurable(durable.reason, resent);
  };
  let result: CreateTaskResult;
  try {
    result = await apiOf(deps, record).createTask(
      { collectorId: record.id, toVersion: record.to },
      undefined,
      beforeSend,
    );
  } catch (err) {
    if (err instanceof CreateNotSent) return done;
    if (err instanceof PreWriteNotDurable) return notDurable(ctx, err.message, err.resent);
    const budget = err instanceof FleetError && err.code === 'FLEET_ERR_API_BUDGET';
    if (
      resend &&
      ctx.record.state === 'creating' &&
      (budget || (err instanceof ApiError && !(err.status !== undefined && err.status < 300)))
    ) {
      // A create went out before and its answer was lost; this one was refused (a 429 storm, 5xx,
      // a budget that did not let it go) and says nothing of that one, which may have made a
      // task. Tried again later through the admitter, it would make a second task once that one
      // ended: only the listings can tell (reconciling).
      await ctx.apply(
        {
          type: 'task_unknown',
          proven: false,
          message: `a create went unanswered, and sent again it was refused: ${(err as Error).message}`,
        },
        { counters },
      );
      log.warn({ err: (err as Error).message }, 'create of unknown outcome, its resend refused; reconciling');
      return done;
    }
    if (ctx.record.state === 'admitted' && (err instanceof ApiError || budget)) {
      // The API budget did not let it go: nothing was sent. Back to the admitter.
      await ctx.apply(
        { type: 'withdraw', message: `the create was not sent: ${(err as Error).message}` },
        { retryReason: err instanceof ApiError ? retryReasonOf(err) : 'network' },
      );
      return done;
    }
    if (err instanceof ApiError) {
      if (err.status !== undefined && err.status >= 200 && err.status < 300) {
        // The service took the create but its answer cannot be read: a task runs whose id we lack.
        await ctx.apply({ type: 'task_unknown', proven: true, message: err.message }, { counters });
        return done;
      }
      const refused = orgProblemOf(err);
      if (refused?.kind === 'credentials') {
        // The organization refused it: its part waits; the Collector is not at fault.
        await deps.health?.report(orgOf(record), refused, deps.clock.now());
        log.warn({ org: orgOf(record), reason: refused.reason }, 'the organization refused the create');
        await ctx.apply(
          { type: 'org_refused', message: `org ${orgOf(record)}: ${refused.reason}: ${err.message}` },
          { counters, retryReason: retryReasonOf(err) },
        );
        return done;
      }
      const transient = TRANSIENT_KINDS.includes(err.kind);
      if (!transient)
        log.error({ kind: err.kind, status: err.status, err: err.message }, 'create answered with an error');
      await ctx.apply(
        { type: 'create_error', transient, message: err.message },
        { counters, retryReason: retryReasonOf(err) },
      );
      return done;
    }
    if (err instanceof FleetError && err.code === 'FLEET_ERR_API_BUDGET') {
      // The request was never sent: nothing was created.
      await ctx.apply(
        { type: 'create_error', transient: true, message: err.message },
        { retryReason: 'network' },
      );
      return done;
    }
    throw err;
  }
  switch (result.kind) {
    case 'created': {
      // After the call: a create may have waited for the API budget first.
      const created = {
        type: 'created',
        taskId: result.taskId,
        requestTime: deps.clock.now(),
        createdBy: PROCESS_NAME,
      } as const;
      const mark = deps.confirmTaskIds === false ? undefined : deps.replicaWait?.mark();
      const applied = await ctx.apply(created, { counters });
      if (!applied) return done;
      if (mark) await confirmTaskId(ctx, created, mark);
      log.info({ taskId: result.taskId, from: record.from, to: record.to }, 'task created');
      // The rollout as it is now, not as the job found it: the scheduler may have begun watching
      // the listings while this create waited for the budget (a rollout's first tasks, admitted
      // during its first scan, before the scheduler decides to watch). Read as the job found it,
      // each of them would read its status once for nothing.
      const watched = (await deps.rollouts.watchMs(ctx.rollout.id)) !== undefined;
      return { kind: 'delay', ms: pollDelay(ctx, 0, watched) };
    }
    case 'collector.not.alive':
      if (resend) {
        // Sent again after a create that went unanswered: that one may have made a task before the
        // Collector stopped heartbeating. Only the listings can tell.
        await ctx.apply(
          { type: 'task_unknown', proven: false, message: `sent again: ${result.message}` },
          { counters },
        );
        return done;
      }
      await ctx.apply(
        { type: 'not_alive', message: result.message },
        { counters, retryReason: 'collector_not_alive' },
      );
      return done;
    case 'ambiguous':
      // Sent again at once, the service tells: 202 (the first never took) or collector.in.upgrading.
      if (!resend) {
        await ctx.count(counters);
        return createTaskStep(ctx, true);
      }
      await ctx.apply({ type: 'task_unknown', proven: false, message: result.message }, { counters });
      log.warn({ kind: result.kind }, 'create of unknown outcome; reconciling');
      return done;
    case 'collector.in.upgrading':
      // A task runs on the Collector. Sent again after a create that went unanswered, it is that
      // create's; answered to a first create, it is not ours (another tool's, an earlier
      // rollout's): no proof that this rollout made a task.
      await ctx.apply({ type: 'task_unknown', proven: resend, message: result.message }, { counters });
      log.warn({ kind: result.kind }, 'a task of unknown id runs; reconciling');
      return done;
    case 'collector.invalid':
    case 'collector.type.invalid':
    case 'collector.version.invalid':
      await ctx.apply({ type: 'rejected', message: `${result.kind}: ${result.message}` }, { counters });
      return done;
  }
}

/** Tries to confirm a task id on the replicas before giving up (each a back-off of 250 ms to 2 s). */
const TASK_ID_CONFIRMS = 6;

/**
 * The task id, like the pre-write, is confirmed on the replicas (WAIT), so that a failover right
 * after a create's answer loses no task id (that Collector would otherwise end `unknown`: only
 * the listings could tell what became of a task whose id is lost). When the WAIT fails, the
 * record is read again (from the primary of now, after a failover the promoted replica): still
 * `creating` (the id was lost with the old primary), the id is written again; either way a
 * barrier (a write of this connection, then WAIT) confirms it. Bounded: after the last try the
 * id stays on the primary alone, said once in the log.
 */
async function confirmTaskId(
  ctx: StepContext,
  created: Extract<Parameters<StepContext['apply']>[0], { type: 'created' }>,
  mark: WriteMark,
): Promise<void> {
  const wait = ctx.deps.replicaWait;
  if (!wait) return;
  let last = await wait.confirm(mark);
  for (let attempt = 1; !last.ok && attempt < TASK_ID_CONFIRMS; attempt++) {
    await new Promise((r) => setTimeout(r, Math.min(250 * 2 ** (attempt - 1), 2000)));
    let now: CollectorRecord | undefined;
    try {
      now = await ctx.deps.store.get(ctx.rollout.id, keyOf(ctx.record));
    } catch (err) {
      last = { ...last, ok: false, reason: `reading the record again failed: ${(err as Error).message}` };
      continue;
    }
    if (now?.state === 'creating' && now.attempts === ctx.record.attempts) {
      // The failover took the id: the promoted replica has the pre-write only. Written again.
      ctx.record = now;
      const again = wait.mark();
      if (!(await ctx.apply(created))) return;
      ctx.log.warn({ taskId: created.taskId }, 'task id lost in a failover: written again');
      last = await wait.confirm(again);
      continue;
    }
    if (now?.taskId !== created.taskId) return; // moved on (another step read its end): not ours to write
    last = await wait.barrier();
  }
  if (!last.ok)
    ctx.log.warn(
      { taskId: created.taskId, reason: last.reason },
      'task id not confirmed by the replicas: a failover now would leave this Collector to the listings',
    );
}

/**
 * The replicas did not confirm `creating` in time, and the create was not sent. A first send goes
 * back to wait (no attempt counted; the admitter tries again). A create sent again was already
 * sent once, with no answer: its fate is the listings' to tell (reconciling), as without WAIT.
 */
async function notDurable(ctx: StepContext, reason: string, resent: boolean): Promise<Step> {
  const message = `the create was not sent: its pre-write was not confirmed by the replicas (${reason})`;
  ctx.log.warn({ reason, resent }, 'create held back: pre-write not confirmed by the replicas');
  if (resent) {
    await ctx.apply({ type: 'task_unknown', proven: false, message });
    return done;
  }
  await ctx.apply({ type: 'withdraw', message });
  return done;
}
