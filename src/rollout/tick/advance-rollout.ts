/**
 * One scheduler tick of one policy's current rollout, in order:
 * 1. a scan of the listing when due (discovery, catch-up, evidence for tasks of unknown id), and
 *    a verification pass over the listings when Collectors' looks are due (verify-collectors.ts);
 * 2. the failure gate (per type, per wave and overall): a trip halts the rollout, aborts it, or
 *    halts it and rolls the wave back (rollback.ts); the cohort gate quarantines a cohort that
 *    fails significantly above its limit (cohort-gate.ts);
 * 3. the waves (wave-progress.ts): a completed wave bakes, runs its analysis gate
 *    (wave-analysis.ts), awaits approval, or opens the next;
 * 4. the calendar (schedule and freezes) and the one admitter (admit.ts): free slots filled within
 *    what the waves allow, with the in-flight limit of the policy (a percentage of the Collectors
 *    found), each Collector only when its upgrade fits in its maintenance window;
 * 5. convergence, the first status read learned from durations, failures reported in bulk.
 * What happens is recorded as rollout events (history + notifications).
 */
import { createHash } from 'node:crypto';
import type { BuildTarget } from '../../api/index.js';
import { quantile } from '../../lib/quantile.js';
import { calendarState } from '../../policy/calendar/calendar-state.js';
import { maxInFlightOf, resolveMaxInFlight } from '../../policy/max-in-flight.js';
import type { Policy } from '../../policy/schema.js';
import { wavePlan } from '../../policy/wave-limits.js';
import { wakeUpgrades } from '../../queue/upgrade-job.js';
import { admit } from '../admit/admit.js';
import { progressWaves } from '../admit/wave-progress.js';
import {
  ACTIVE_STATES,
  COLLECTOR_STATES,
  gateClass,
  SLOT_STATES,
  type StateCounts,
  sumStates,
} from '../collector/collector-state.js';
import { judgeCohortGate } from '../gates/cohort-gate.js';
import { judgeGate } from '../gates/failure-gate.js';
import { analyseWave } from '../gates/wave-analysis.js';
import type { EmitRolloutEvent } from '../life/event-log.js';
import { admits } from '../life/rollout-phase.js';
import type { CurrentRollout, RolloutRecord } from '../life/rollout-store.js';
import { listingPass, tasksUnderWay, watchDecision } from '../listings/listing-pass.js';
import { reconcileUnknownTasks } from '../listings/reconcile-unknown-tasks.js';
import { scanUpgradable } from '../listings/scan-upgradable.js';
import { abort } from '../operator/control.js';
import { type RollbackRequest, WAVE_ROLLBACK_STATES } from '../operator/rollback.js';
import { learnFirstRead } from './learn-first-read.js';
import type { SchedulerDeps } from './scheduler.js';

/** What the scheduler remembers between ticks (in memory: a new leader starts afresh, harmlessly). */
export interface RolloutMemory {
  lastScan: Map<string, number>;
  /** Rollouts whose Collectors all settled after their last scan: one more scan decides convergence. */
  idleScanned: Set<string>;
  /** Successes counted when the first status read was last learned. */
  learnedAt: Map<string, number>;
  /** Bad outcomes last reported in a `collectors.failed` event, and when. */
  failuresReported: Map<string, { bad: number; at: number }>;
  /** When each rollout's last verification pass ran (verify-collectors.ts). */
  lastVerify: Map<string, number>;
  /** When each rollout's last pass watching its tasks ran (listing-pass.ts). */
  lastWatch: Map<string, number>;
  /** Listing pages a pass of each rollout read (a moving average): what a pass costs. */
  pagesPerPass: Map<string, number>;
  /** Median duration of each rollout's upgrades, as learned. */
  medianMs: Map<string, number>;
}

export interface AdvanceDeps extends SchedulerDeps {
  emit: EmitRolloutEvent;
  memory: RolloutMemory;
  scanEveryMs: number;
  reconcileEveryMs: number;
}

/** Clock ms between two `collectors.failed` events of a rollout. */
export const FAILURE_REPORT_EVERY_MS = 5 * 60_000;

const badCount = (counts: StateCounts) =>
  COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad').reduce((n, s) => n + (counts[s] ?? 0), 0);

export async function advanceRollout(
  deps: AdvanceDeps,
  input: {
    policy: Policy;
    view: CurrentRollout;
    targets: readonly BuildTarget[];
    earlier: readonly Policy[];
    now: number;
  },
): Promise<void> {
  const { rollouts, store, logger, memory } = deps;
  const { policy, view, targets, earlier, now } = input;
  const { rollout } = view;
  const log = logger.child({ rollout: rollout.id });
  let counts = view.counts;
  const reconciling = counts.reconciling ?? 0;
  const sinceScan = now - (memory.lastScan.get(rollout.id) ?? 0);
  const idle = sumStates(counts, ACTIVE_STATES) === 0;
  const scanDue =
    rollout.scans === 0 ||
    sinceScan >= deps.scanEveryMs ||
    (reconciling > 0 && sinceScan >= deps.reconcileEveryMs) ||
    (idle && !memory.idleScanned.has(rollout.id));
  let addedByScan = 0;
  if (scanDue) {
    const scan = await scanUpgradable(deps, rollout, policy, earlier, {
      ...(rollout.scans === 0 ? { onPage: () => admitDuringFirstScan(deps, rollout, policy, now) } : {}),
    });
    addedByScan = scan.added.length + scan.caughtUp.length;
    memory.lastScan.set(rollout.id, now);
    await rollouts.noteScan(rollout.id, now);
    if (reconciling > 0)
      await reconcileUnknownTasks(deps, rollout, { listed: scan.listed, pageSize: policy.pageSize, targets });
    if (addedByScan)
      log.info(
        { added: scan.added.length, caughtUp: scan.caughtUp.length, listed: scan.listed.size },
        'scan found Collectors',
      );
    counts = await store.counts(rollout.id);
    rollout.canaries += scan.canaries;
    if (idle) memory.idleScanned.add(rollout.id);
  }
  await decideWatch(deps, rollout, counts, policy.pageSize);
  if (await listingDue(deps, rollout, counts, targets, policy.pageSize, now))
    counts = await store.counts(rollout.id);
  const active = sumStates(counts, ACTIVE_STATES);
  if (active > 0) memory.idleScanned.delete(rollout.id);

  if (admits(rollout.phase)) await judge(deps, rollout, policy, counts, now);
  if (admits(rollout.phase) && policy.cohorts && (await judgeCohortGate(deps, rollout, policy.cohorts, now)))
    counts = await store.counts(rollout.id);
  let room = 0;
  if (admits(rollout.phase)) room = await moveWaves(deps, rollout, policy, counts, now);
  await fitLimit(deps, rollout, policy, counts);
  const calendar = calendarState(policy, now);
  const holding: string[] = [];
  if (!calendar.open) {
    holding.push(calendar.detail);
    if (calendar.reason === 'after_schedule' && calendar.endBehavior === 'abort' && admits(rollout.phase)) {
      await abort(
        deps,
        rollout.id,
        'the schedule',
        `its schedule ended (${calendar.detail})`,
        'scheduler',
      ).catch(() => undefined);
      rollout.phase = 'aborted';
    }
  } else {
    const admitted = await admit(deps, { rollout, policy, counts, slotsHeld: view.slotsHeld, now, room });
    if (admitted.heldByWindow > 0 && admitted.records.length === 0)
      holding.push(admitted.windowDetail ?? 'maintenance windows closed');
  }
  await noteHolding(deps, rollout, holding.join('; '));

  if (rollout.phase === 'running' && active === 0 && scanDue && addedByScan === 0 && idle) {
    if (await rollouts.move(rollout, 'converge', now)) {
      log.info({ counts }, 'rollout converged');
      await deps.emit(
        rollout,
        'rollout.converged',
        'scheduler',
        `${rollout.id} converged: ${summary(counts)}`,
        { counts },
      );
    }
  } else if (rollout.phase === 'converged' && active > 0) {
    if (await rollouts.move(rollout, 'reopen', now)) log.info({ counts }, 'rollout running again');
  }
  await learn(deps, rollout, counts);
  await reportFailures(deps, rollout, counts, now);
}

type ListingDeps = Pick<
  AdvanceDeps,
  'api' | 'store' | 'clock' | 'logger' | 'onOutcome' | 'onTaskEnded' | 'memory' | 'queue' | 'rollouts'
>;

/**
 * A pass over the listings (listing-pass.ts) when Collectors' verification is due (at most every
 * `verify.interval`) or, while the rollout watches its tasks, every `watchMs`. True when it
 * moved any Collector.
 */
export async function listingDue(
  deps: ListingDeps,
  rollout: RolloutRecord,
  counts: StateCounts,
  targets: readonly BuildTarget[],
  pageSize: number,
  now: number,
): Promise<boolean> {
  const { memory } = deps;
  const since = (m: Map<string, number>) => now - (m.get(rollout.id) ?? Number.NEGATIVE_INFINITY);
  const watching = rollout.watchMs !== undefined && sumStates(counts, SLOT_STATES) > 0;
  const watchDue = watching && since(memory.lastWatch) >= (rollout.watchMs ?? 0);
  // While the rollout watches, verification rides along the watching passes (no pass of its own).
  const verifyDue =
    !watching &&
    (counts.verifying ?? 0) > 0 &&
    since(memory.lastVerify) >= (rollout.settings.verify?.intervalMs ?? 0);
  if (!verifyDue && !watchDue) return false;
  if ((counts.verifying ?? 0) > 0) memory.lastVerify.set(rollout.id, now);
  const previousPassAt = memory.lastWatch.get(rollout.id);
  if (watchDue) memory.lastWatch.set(rollout.id, now);
  const pass = await listingPass(deps, rollout, {
    targets,
    pageSize,
    watch: watchDue,
    ...(previousPassAt === undefined ? {} : { previousPassAt }),
  });
  if (pass.pages > 0) {
    const before = memory.pagesPerPass.get(rollout.id);
    memory.pagesPerPass.set(rollout.id, before === undefined ? pass.pages : 0.7 * before + 0.3 * pass.pages);
  }
  return pass.verified + pass.unhealthy + pass.succeeded > 0;
}

/**
 * Whether the rollout watches its tasks through the listings (listing-pass.ts, watchDecision),
 * written onto the rollout (`watchMs`) for its jobs: a watched task's job sleeps until the
 * scheduler wakes it. Turning watching off wakes every sleeping job at once.
 */
async function decideWatch(deps: ListingDeps, rollout: RolloutRecord, counts: StateCounts, pageSize: number) {
  const { memory } = deps;
  const total = sumStates(counts, COLLECTOR_STATES);
  const active = sumStates(counts, ACTIVE_STATES);
  const decision = watchDecision({
    pagesPerPass: memory.pagesPerPass.get(rollout.id) ?? Math.ceil(total / pageSize),
    inFlight: Math.min(rollout.maxInFlight, active),
    medianMs: memory.medianMs.get(rollout.id) ?? rollout.settings.pollInitialMs * 3,
    watching: rollout.watchMs !== undefined,
  });
  if (decision.watch) {
    if (rollout.watchMs === decision.intervalMs) return;
    await deps.rollouts.setFields(rollout.id, { watchMs: decision.intervalMs });
    if (rollout.watchMs === undefined)
      deps.logger.info(
        { rollout: rollout.id, intervalMs: decision.intervalMs, cost: Number(decision.cost.toFixed(2)) },
        'watching tasks through the listings',
      );
    rollout.watchMs = decision.intervalMs;
    return;
  }
  if (rollout.watchMs === undefined) return;
  await deps.rollouts.setFields(rollout.id, { watchMs: '' });
  rollout.watchMs = undefined;
  const sleeping = await tasksUnderWay(deps, rollout);
  await wakeUpgrades(
    deps.queue,
    sleeping.map((r) => ({ rolloutId: rollout.id, collectorId: r.id, admission: r.admissions })),
  );
  deps.logger.info(
    { rollout: rollout.id, cost: Number(decision.cost.toFixed(2)) },
    'reading task statuses again',
  );
}

/**
 * During a rollout's first scan, the Collectors of each page may start at once, rather than after
 * the whole listing (at 4 requests/s, 100,000 Collectors take 25 s to list): within the room of
 * the waves planned on the Collectors found so far (a share of fewer is never more) and the
 * calendar. Not when the first wave selects its canaries: they must go first, and only the whole
 * listing says which they are. Answers the Collectors it admitted: their tasks take them off the
 * listing, and the scan's walk steps back for them so that it skips none of the rest.
 */
async function admitDuringFirstScan(
  deps: AdvanceDeps,
  rollout: RolloutRecord,
  policy: Policy,
  now: number,
): Promise<number[]> {
  if (!admits(rollout.phase) || policy.waves[0]?.select || !calendarState(policy, now).open) return [];
  const counts = await deps.store.counts(rollout.id);
  const plan = wavePlan(policy.waves, sumStates(counts, COLLECTOR_STATES), 0, policy.analysis);
  const { room } = progressWaves({ plan, progress: rollout.wave, counts, now });
  if (room <= 0) return [];
  const slotsHeld = (await deps.store.slotHolders(rollout.policy)).length;
  return (await admit(deps, { rollout, policy, counts, slotsHeld, now, room })).records.map((r) => r.id);
}

/** The policy's in-flight limit for the Collectors found so far (a percentage grows with them). */
async function fitLimit(deps: AdvanceDeps, rollout: RolloutRecord, policy: Policy, counts: StateCounts) {
  const limit = resolveMaxInFlight(maxInFlightOf(policy), sumStates(counts, COLLECTOR_STATES));
  if (limit === rollout.maxInFlight) return;
  await deps.rollouts.update(rollout.id, {
    maxInFlight: limit,
    target: rollout.target,
    settings: rollout.settings,
  });
  rollout.maxInFlight = limit;
}

/** Why nothing starts now, for `status` (written only when it changes). */
async function noteHolding(deps: AdvanceDeps, rollout: RolloutRecord, holding: string) {
  if ((rollout.holding ?? '') === holding) return;
  await deps.rollouts.setFields(rollout.id, { holding });
  rollout.holding = holding;
}

/** `12 succeeded, 1 failed, 2 not_alive`, in the states' order. */
export function summary(counts: StateCounts): string {
  const parts = COLLECTOR_STATES.filter((s) => (counts[s] ?? 0) > 0).map((s) => `${counts[s]} ${s}`);
  return parts.length ? parts.join(', ') : 'no Collectors';
}

/**
 * The failure gate: a trip halts the rollout (onTrip: pause), aborts it, or halts it and rolls
 * the tripped wave back (onTrip: rollback-wave; the request is filed before the halt, so a crash
 * in between trips the gate again and files the same request, carried out once: rollback.ts).
 */
async function judge(
  deps: AdvanceDeps,
  rollout: RolloutRecord,
  policy: Policy,
  counts: StateCounts,
  now: number,
) {
  if (!policy.failureGate) return;
  const waves = await deps.store.waveCounts(rollout.id);
  const verdict = judgeGate(policy.failureGate, counts, {
    waves,
    ...(rollout.gateBaseline ? { baseline: rollout.gateBaseline } : {}),
    ...(rollout.waveBaseline ? { waveBaseline: rollout.waveBaseline } : {}),
  });
  if (!verdict.trip) return;
  deps.logger.warn(
    { rollout: rollout.id, reason: verdict.trip, onTrip: verdict.onTrip },
    'the failure gate tripped',
  );
  if (verdict.onTrip === 'rollback-wave') {
    const wave = verdict.wave ?? rollout.wave.index;
    const request: RollbackRequest = {
      // The same until an operator resumes (which moves the baseline): a re-trip after a crash files it again.
      id: `gate-wave-${wave + 1}-${createHash('sha256')
        .update(JSON.stringify(rollout.gateBaseline ?? {}))
        .digest('hex')
        .slice(0, 12)}`,
      states: [...WAVE_ROLLBACK_STATES],
      wave,
      by: 'the failure gate',
      source: 'gate',
      at: now,
      reason: `the failure gate tripped: ${verdict.trip}`,
    };
    await deps.rollouts.requestRollback(rollout.id, JSON.stringify(request));
  }
  if (verdict.onTrip === 'abort') {
    await abort(deps, rollout.id, 'the failure gate', `the failure gate: ${verdict.trip}`, 'gate').catch(
      () => undefined,
    );
    rollout.phase = 'aborted';
    return;
  }
  const moved = await deps.rollouts.move(rollout, 'halt', now, verdict.trip);
  if (!moved) return;
  rollout.phase = moved;
  await deps.emit(
    rollout,
    'rollout.halted',
    'gate',
    `${rollout.id} halted by its failure gate: ${verdict.trip}.${verdict.onTrip === 'rollback-wave' ? ` Wave ${(verdict.wave ?? rollout.wave.index) + 1}'s upgraded and unhealthy Collectors go back to their previous builds.` : ''} Look at \`fleet-upgrade report ${rollout.id}\`, then \`fleet-upgrade resume ${rollout.id}\` or \`abort\``,
    { criterion: verdict.trip, counts, onTrip: verdict.onTrip },
  );
}

/** Moves the waves on and records what happened; returns how many first attempts may start. */
async function moveWaves(
  deps: AdvanceDeps,
  rollout: RolloutRecord,
  policy: Policy,
  counts: StateCounts,
  now: number,
) {
  const total = sumStates(counts, COLLECTOR_STATES);
  const plan = wavePlan(policy.waves, total, rollout.canaries, policy.analysis);
  let analysisPassed = false;
  const gate = plan[rollout.wave.index]?.analysis;
  if (rollout.wave.waitingFor === 'analysis' && gate) {
    const result = await analyseWave(deps, rollout, gate, now);
    if (result === 'stopped') return 0;
    analysisPassed = result === 'passed';
  }
  const step = progressWaves({ plan, progress: rollout.wave, counts, now, analysisPassed });
  const of = plan.length;
  if (!step.changed && rollout.wave.of === of) return step.room;
  if (!(await deps.rollouts.setWave(rollout.id, rollout.wave.seq, { ...step.progress, of }))) return 0;
  rollout.wave = { ...step.progress, of, seq: rollout.wave.seq + 1 };
  for (const n of step.news) {
    const where = `wave ${n.wave} of ${of}`;
    const message =
      n.type === 'wave.completed'
        ? `${rollout.id}: ${where} completed (${summary(counts)})`
        : n.type === 'wave.started'
          ? `${rollout.id}: ${where} started`
          : n.type === 'rollout.baking'
            ? `${rollout.id}: ${where} baking until ${new Date(n.until ?? now).toISOString()}; \`fleet-upgrade promote ${rollout.id}\` ends it now`
            : n.type === 'analysis.started'
              ? `${rollout.id}: ${where} done; its analysis gate runs before the next wave (\`fleet-upgrade promote ${rollout.id}\` skips it)`
              : `${rollout.id}: ${where} done, awaiting approval: \`fleet-upgrade promote ${rollout.id}\` starts the next wave`;
    await deps.emit(rollout, n.type, 'scheduler', message, {
      wave: n.wave,
      of,
      ...(n.until ? { until: n.until } : {}),
    });
  }
  return step.room;
}

/**
 * The first status read of a task, learned from this rollout's durations: after each success
 * while few are known, then after every tenth (the 10th percentile hardly moves by then).
 */
async function learn(deps: AdvanceDeps, rollout: RolloutRecord, counts: StateCounts) {
  const succeeded = counts.succeeded ?? 0;
  const last = deps.memory.learnedAt.get(rollout.id);
  if (last === succeeded || (last !== undefined && succeeded >= 50 && succeeded - last < 10)) return;
  deps.memory.learnedAt.set(rollout.id, succeeded);
  const durations = await deps.rollouts.durations(rollout.id);
  if (durations.length >= 5)
    deps.memory.medianMs.set(
      rollout.id,
      quantile(
        [...durations].sort((a, b) => a - b),
        0.5,
      ),
    );
  const firstRead = learnFirstRead(durations, rollout.settings);
  if (firstRead !== rollout.firstPollMs) await deps.rollouts.setFirstPoll(rollout.id, firstRead);
  // The expected length of an upgrade, for the window fit: the 95th percentile once 20 are known.
  if (durations.length >= 20) {
    const p95 = Math.round(
      quantile(
        [...durations].sort((a, b) => a - b),
        0.95,
      ),
    );
    if (p95 !== rollout.expectedMs) await deps.rollouts.setFields(rollout.id, { expectedMs: p95 });
  }
}

/** Collectors' final failures, aggregated: one event at most every few minutes while they grow. */
async function reportFailures(deps: AdvanceDeps, rollout: RolloutRecord, counts: StateCounts, now: number) {
  const bad = badCount(counts);
  const last = deps.memory.failuresReported.get(rollout.id);
  if (!last) {
    deps.memory.failuresReported.set(rollout.id, { bad, at: now });
    return;
  }
  if (bad <= last.bad || now - last.at < FAILURE_REPORT_EVERY_MS) return;
  deps.memory.failuresReported.set(rollout.id, { bad, at: now });
  const byState = Object.fromEntries(
    COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad' && (counts[s] ?? 0) > 0).map((s) => [s, counts[s]]),
  );
  await deps.emit(
    rollout,
    'collectors.failed',
    'scheduler',
    `${rollout.id}: ${bad - last.bad} more Collectors failed (${bad} in all: ${summary(byState)}); \`fleet-upgrade report ${rollout.id}\` has their messages`,
    { new: bad - last.bad, total: bad, byState },
  );
}
