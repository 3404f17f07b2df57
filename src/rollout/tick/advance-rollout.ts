/**
 * The order of one scheduler tick of one policy's current rollout (each step in its own room):
 * 1. a scan of the listing when due (listings/scan-upgradable.ts: discovery, catch-up, evidence
 *    for tasks of unknown id), and a pass over the listings when tasks are watched or Collectors'
 *    looks are due (watch-step.ts);
 * 2. the gates (gates/): the failure gate (per type, per wave and overall) halts the rollout,
 *    aborts it, or halts it and rolls the wave back; the cohort gate quarantines a cohort that
 *    fails significantly above its limit;
 * 3. the waves (move-waves.ts): a completed wave bakes, runs its analysis gate, awaits approval,
 *    or opens the next;
 * 4. the calendar (schedule and freezes) and the one admitter (admit/admit.ts): free slots filled
 *    within what the waves allow, with the in-flight limit of the policy (a percentage of the
 *    Collectors found), each Collector only when its upgrade fits in its maintenance window;
 *    Collectors below the policy's `minimumBuild` first, in a wave of their own, even while the
 *    calendar is closed (admit/outside-waves.ts);
 * 5. convergence (or reopening), durations learned, failures reported in bulk.
 * A phase move and its event are one atomic write; the rest of the pass gathers a typed patch
 * on the rollout's draft, written once at the end.
 */
import pLimit from 'p-limit';
import { calendarState } from '../../policy/calendar/calendar-state.js';
import { maxInFlightOf, resolveMaxInFlight } from '../../policy/max-in-flight.js';
import { wavePlan } from '../../policy/wave-limits.js';
import { admit, type LengthModel, outsideWaves, progressWaves } from '../admit/index.js';
import {
  ACTIVE_STATES,
  COLLECTOR_STATES,
  type CollectorKey,
  keyOf,
  orgOf,
  type StateCounts,
  sumStates,
} from '../collector/index.js';
import { judgeCohortGate, tripFailureGate } from '../gates/index.js';
import { admits, buildOf, type RolloutDraft } from '../life/index.js';
import { reconcileUnknownTasks, scanUpgradable } from '../listings/index.js';
import { abortRollout } from '../operator/index.js';
import { eachOrgAtOnce } from './each-org-at-once.js';
import { learnDurations } from './learn-first-read.js';
import { learnLengths, longestFirst } from './learn-lengths.js';
import { moveWaves } from './move-waves.js';
import { reportFailures } from './report-failures.js';
import { dueAt, type RolloutPass, type TickContext } from './tick-context.js';
import { decideWatch, listingDue } from './watch-step.js';

export async function advanceRollout(ctx: TickContext, pass: RolloutPass): Promise<void> {
  const { rollouts, store, logger } = ctx;
  const { policy, draft, now } = pass;
  const id = draft.view.id;
  const log = logger.child({ rollout: id });
  let counts = pass.counts;

  const longest = longestFirst(policy, draft.view, counts);
  const lengths = await learnLengths(ctx, id, counts, longest);
  const scan = await scanStep(ctx, pass, lengths, longest);
  // Slots held change under the round: a scan and a listing pass admit between their pages.
  let slotsHeld = pass.slotsHeld;
  const reread = async () => {
    counts = await store.counts(id);
    slotsHeld = (await store.slotHolders(policy.name)).length;
  };
  if (scan.ran) await reread();
  await decideWatch(ctx, draft, counts, policy.pageSize, now);
  // Slots a listing pass frees are filled page by page, not after the pass.
  const admitNow = () => admitBetweenPages(ctx, draft, pass, lengths);
  if (await listingDue(ctx, draft.view, counts, pass.orgs, policy.pageSize, now, admitNow)) await reread();
  const active = sumStates(counts, ACTIVE_STATES);
  if (active > 0) ctx.memory.idleScanned.delete(id);

  if (admits(draft.view.phase)) await tripFailureGate(ctx, draft, policy.failureGate, counts, now);
  if (admits(draft.view.phase) && policy.cohorts && (await judgeCohortGate(ctx, draft, policy.cohorts, now)))
    counts = await store.counts(id);
  let room = 0;
  if (admits(draft.view.phase)) room = await moveWaves(ctx, draft, pass, counts);
  // A bake's end and the next retry due are rounds of their own.
  if (draft.view.wave.waitingFor === 'bake') dueAt(ctx.memory, draft.view.wave.bakeUntil);
  if (pass.nextRetryAt !== undefined && pass.nextRetryAt > now) dueAt(ctx.memory, pass.nextRetryAt);
  const limit = resolveMaxInFlight(maxInFlightOf(policy), sumStates(counts, COLLECTOR_STATES));
  if (limit !== draft.view.maxInFlight) draft.set({ maxInFlight: limit });

  const calendar = calendarState(policy, now);
  const holding: string[] = [];
  // Below minimumBuild: a wave of their own, admitted first, whatever the calendar says.
  const belowMinimumQueued = draft.view.belowMinimum ? await ctx.store.queuedBelowMinimum(id) : 0;
  if (!calendar.open) {
    holding.push(calendar.detail);
    if (belowMinimumQueued > 0 || (draft.view.belowMinimum ?? 0) > 0)
      await admit(ctx, {
        rollout: draft.view,
        policy,
        counts,
        slotsHeld,
        now: ctx.clock.now(),
        room: 0,
        onlyBelowMinimum: true,
        belowMinimumQueued,
        waiting: await waitingNow(ctx, pass),
        probes: pass.probes,
        lengths,
      });
    if (
      calendar.reason === 'after_schedule' &&
      calendar.endBehavior === 'abort' &&
      admits(draft.view.phase)
    ) {
      const aborted = await abortRollout(ctx, draft.view, {
        actor: 'the schedule',
        reason: `its schedule ended (${calendar.detail})`,
        source: 'scheduler',
        counts,
      });
      if (aborted) draft.took(aborted.rollout);
    }
  } else {
    const admitted = await admit(ctx, {
      rollout: draft.view,
      policy,
      counts,
      slotsHeld,
      // The time of the admission itself (the round's passes may have taken seconds).
      now: ctx.clock.now(),
      room,
      belowMinimumQueued,
      waiting: await waitingNow(ctx, pass),
      probes: pass.probes,
      lengths,
    });
    for (const r of admitted.records)
      if (pass.probes.has(orgOf(r))) await ctx.probed(orgOf(r), id, String(keyOf(r)));
    if (admitted.heldByWindow > 0 && admitted.records.length === 0)
      holding.push(admitted.windowDetail ?? 'maintenance windows closed');
  }
  if ((draft.view.holding ?? '') !== holding.join('; ')) draft.set({ holding: holding.join('; ') });

  const phase = draft.view.phase;
  // A rollout of which an organization's part waits has not converged: that part is not known.
  if (
    phase === 'running' &&
    active === 0 &&
    scan.ran &&
    scan.added === 0 &&
    scan.idle &&
    pass.waiting.size === 0
  ) {
    if (
      await draft.move(rollouts, 'converge', now, {
        news: [{ type: 'rollout.converged', source: 'scheduler', counts }],
      })
    )
      log.info({ counts }, 'rollout converged');
  } else if (phase === 'converged' && active > 0) {
    const news = [{ type: 'rollout.reopened' as const, source: 'scheduler' as const, counts, active }];
    if (await draft.move(rollouts, 'reopen', now, { news })) log.info({ counts }, 'rollout running again');
  }
  await learnDurations(ctx, draft, counts);
  await reportFailures(ctx, draft, counts, now);
  await draft.flush(rollouts, now, log);
}

/**
 * The scan of the rollout's listings, when due (one per organization whose part goes on): at the
 * start, every scan interval, sooner while tasks of unknown id wait for evidence, and once more
 * after every Collector settled (which decides convergence). Tasks of unknown id are resolved from
 * what it saw.
 */
async function scanStep(
  ctx: TickContext,
  pass: RolloutPass,
  lengths: LengthModel,
  longest: boolean,
): Promise<{ ran: boolean; added: number; idle: boolean }> {
  const { memory } = ctx;
  const { policy, draft, earlier, now } = pass;
  const rollout = draft.view;
  const reconciling = pass.counts.reconciling ?? 0;
  const sinceScan = now - (memory.lastScan.get(rollout.id) ?? 0);
  dueAt(
    memory,
    (memory.lastScan.get(rollout.id) ?? now) + (reconciling > 0 ? ctx.reconcileEveryMs : ctx.scanEveryMs),
  );
  const idle = sumStates(pass.counts, ACTIVE_STATES) === 0;
  const due =
    rollout.scans === 0 ||
    sinceScan >= ctx.scanEveryMs ||
    (reconciling > 0 && sinceScan >= ctx.reconcileEveryMs) ||
    (idle && !memory.idleScanned.has(rollout.id));
  if (!due || pass.orgs.length === 0) return { ran: false, added: 0, idle };
  let added = 0;
  let canaries = 0;
  let complete = true;
  // Each organization's listing goes through its own API budget: they are walked at once, not one
  // after the other (during a first scan each one's pages queue behind its own creates, and one
  // after the other the tenth organization would start minutes after the first). Admissions
  // between pages, which write the rollout, take turns.
  const admitting = pLimit(1);
  const scanOrg = async (part: (typeof pass.orgs)[number]): Promise<void> => {
    const deps = { ...ctx, api: part.api };
    let scan: Awaited<ReturnType<typeof scanUpgradable>>;
    try {
      scan = await scanUpgradable(deps, rollout, policy, earlier, {
        org: part.org,
        targets: part.targets,
        lengths,
        longest,
        // The first wave's canaries must go first, and only the whole listing says which they are.
        ...(rollout.scans === 0 && !policy.waves[0]?.select
          ? { onPage: () => admitting(() => admitBetweenPages(ctx, draft, pass, lengths)) }
          : {}),
      });
    } catch (err) {
      // The organization's part waits (its problem is recorded); the others' go on.
      if (!(await ctx.orgFailed(part.org, err))) throw err;
      complete = false;
      return;
    }
    added += scan.added.length + scan.caughtUp.length;
    canaries += scan.canaries;
    if (reconciling > 0)
      await reconcileUnknownTasks(deps, rollout, {
        listed: scan.listed,
        pageSize: policy.pageSize,
        targets: part.targets,
        org: part.org,
      });
    if (scan.added.length + scan.caughtUp.length + scan.retargeted)
      ctx.logger.info(
        {
          rollout: rollout.id,
          org: part.org,
          added: scan.added.length,
          caughtUp: scan.caughtUp.length,
          ...(scan.retargeted ? { retargeted: scan.retargeted, build: buildOf(rollout, part.org) } : {}),
          listed: scan.listed.size,
        },
        'scan found Collectors',
      );
  };
  await eachOrgAtOnce(pass.orgs, scanOrg);
  memory.lastScan.set(rollout.id, now);
  draft.add('scans', 1);
  draft.set({ lastScanAt: now });
  // The store counted the canaries it found (the waves' plan reads them).
  if (canaries > 0) {
    const stored = await ctx.rollouts.get(rollout.id);
    if (stored) draft.took(stored);
  }
  if (idle && complete) memory.idleScanned.add(rollout.id);
  return { ran: complete, added, idle };
}

/**
 * The organizations that wait now: the round's (problems, operators' pauses as the round began)
 * and those an operator paused since (`pause --org` during the round's passes), read again before
 * each admission, so that nothing of an organization starts once its pause has been answered.
 */
async function waitingNow(ctx: TickContext, pass: RolloutPass): Promise<ReadonlySet<string>> {
  const stored = await ctx.rollouts.get(pass.draft.view.id);
  const paused = (stored?.pausedOrgs ?? []).map((p) => p.org);
  return paused.length ? new Set([...pass.waiting, ...paused]) : pass.waiting;
}

/**
 * Admission between two pages of a listing: during a rollout's first scan, the Collectors of each
 * page may start at once, rather than after the whole listing (at 4 requests/s, 100,000
 * Collectors take 25 s to list), within the room of the waves planned on the Collectors found so
 * far (a share of fewer is never more); during a listing pass, the slots of the tasks a page
 * showed ended are filled before the next page. Within the calendar, as every admission. Answers
 * the Collectors it admitted: their tasks take them off the listing, and a scan's walk steps back
 * for them so that it skips none of the rest.
 */
async function admitBetweenPages(
  ctx: TickContext,
  draft: RolloutDraft,
  pass: RolloutPass,
  lengths: LengthModel,
): Promise<CollectorKey[]> {
  const { policy } = pass;
  const now = ctx.clock.now();
  const rollout = draft.view;
  if (!admits(rollout.phase)) return [];
  const open = calendarState(policy, now).open;
  const outside = await outsideWaves(ctx.store, rollout);
  // While the calendar is closed, only Collectors below minimumBuild may start.
  if (!open && outside.queued === 0) return [];
  const counts: StateCounts = await ctx.store.counts(rollout.id);
  const total = sumStates(counts, COLLECTOR_STATES) - outside.total;
  const plan = wavePlan(policy.waves, total, rollout.canaries, policy.analysis);
  const step = progressWaves({ plan, progress: rollout.wave, counts, now, outside });
  // A wave that ends (or must bake, await approval or its analysis) is moved by the round's own
  // step (move-waves.ts), which writes it: no admission before that.
  if (step.changed) return [];
  const { room } = step;
  const slotsHeld = (await ctx.store.slotHolders(rollout.policy)).length;
  const admitted = await admit(ctx, {
    rollout,
    policy,
    counts,
    slotsHeld,
    now,
    room,
    ...(open ? {} : { onlyBelowMinimum: true }),
    belowMinimumQueued: outside.queued,
    waiting: new Set([...(await waitingNow(ctx, pass)), ...pass.probes]),
    lengths,
  });
  return admitted.records.map(keyOf);
}
