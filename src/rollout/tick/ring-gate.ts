/**
 * Whether the ring a policy follows (`after: { policy, soak, require }`) has released a build: a
 * pure judgement of the earlier policy's rollout of that build (its id is `<after.policy>@<build>`)
 * as read this tick.
 *
 *   no rollout of the build there ────────────────► waiting (not_started)
 *   running, paused ──────────────────────────────► waiting (converging, paused)
 *   halted, aborted, rolled back ─────────────────► blocked (the build is bad there)
 *   converged with a cohort still quarantined ────► blocked (quarantined)
 *   converged, soaking until convergedAt + soak ──► waiting (soaking, until)
 *   converged and soaked, below require ──────────► waiting (require)
 *   converged, soaked, require met ───────────────► released
 * A rollout superseded by a newer build there counts as it was when superseded: released when it
 * had converged and soaked before it was (its `updatedAt` is the supersede), never halted.
 * `blocked` keeps the later ring from starting the build and pauses its rollout of it where it
 * already runs (scheduler.ts); `waiting` only keeps it from starting.
 */
import { formatDuration } from '../../lib/duration.js';
import { formatWallTime } from '../../policy/calendar/format-instant.js';
import type { After } from '../../policy/rings.js';
import { SETTLED_STATES, type StateCounts, sumStates } from '../collector/index.js';
import type { CurrentRollout } from '../life/index.js';

export type RingWaitReason = 'not_started' | 'converging' | 'paused' | 'soaking' | 'require';
export type RingBlockReason = 'halted' | 'aborted' | 'rolled_back' | 'quarantined';

export type RingVerdict =
  | { kind: 'released'; convergedAt: number }
  | { kind: 'waiting'; reason: RingWaitReason; until?: number; text: string }
  | { kind: 'blocked'; reason: RingBlockReason; text: string };

/** `2026-11-27 10:00 (UTC)`: how a ring's date is shown in `status` and events. */
export function ringDate(ms: number): string {
  return `${formatWallTime(ms)} (UTC)`;
}

/**
 * The share of the rollout's Collectors with an outcome that succeeded (verified alive on the
 * build when its policy verifies): Collectors skipped, aborted or held by a known issue left out.
 * Undefined when none has an outcome.
 */
export function verifiedRatio(
  counts: StateCounts,
  held: { knownIssueSkipped?: number; knownIssueManual?: number } = {},
): number | undefined {
  const tried =
    sumStates(counts, SETTLED_STATES) -
    (counts.skipped ?? 0) -
    (counts.aborted ?? 0) -
    Math.min(counts.manual ?? 0, held.knownIssueManual ?? 0);
  return tried > 0 ? (counts.succeeded ?? 0) / tried : undefined;
}

export function judgeRing(
  after: After,
  build: string,
  earlier: CurrentRollout | undefined,
  now: number,
): RingVerdict {
  const ring = after.policy;
  const waiting = (reason: RingWaitReason, text: string, until?: number): RingVerdict => ({
    kind: 'waiting',
    reason,
    text,
    ...(until === undefined ? {} : { until }),
  });
  if (!earlier) return waiting('not_started', `${build} has not started in ${ring} yet`);
  const r = earlier.rollout;
  if (r.rollbacks?.some((b) => b.state === 'started'))
    return { kind: 'blocked', reason: 'rolled_back', text: `${build} was rolled back in ${ring}` };
  if (r.phase === 'halted' || r.haltReason)
    return {
      kind: 'blocked',
      reason: 'halted',
      text: `${build} halted in ${ring}${r.haltReason ? `: ${r.haltReason}` : ''}`,
    };
  if (r.phase === 'aborted')
    return {
      kind: 'blocked',
      reason: 'aborted',
      text: `${build} was aborted in ${ring}${r.abortReason ? ` (${r.abortReason})` : ''}`,
    };
  if (r.phase === 'paused') return waiting('paused', `${build} waits: ${r.id} is paused`);
  const superseded = r.phase === 'superseded';
  if (superseded && r.convergedAt === undefined)
    return waiting('converging', `${build} was superseded in ${ring} before it converged`);
  if (r.phase === 'running' || r.convergedAt === undefined)
    return waiting('converging', `${build} waits until it converges in ${ring}`);
  if (r.quarantined?.length)
    return {
      kind: 'blocked',
      reason: 'quarantined',
      // `retry` refuses a superseded rollout: no command to suggest then.
      text: `${build} has ${r.quarantined.length === 1 ? 'a cohort' : 'cohorts'} quarantined in ${ring} (${r.quarantined.map((q) => q.cohort).join('; ')})${superseded ? `, never released: ${r.id} was superseded` : `: \`fleet-upgrade retry ${r.id} --only quarantined\` releases ${r.quarantined.length === 1 ? 'it' : 'them'}`}`,
    };
  const soakedAt = r.convergedAt + after.soak;
  // Superseded before it had soaked: it never will there.
  const end = superseded ? r.updatedAt : now;
  if (soakedAt > end) {
    if (superseded)
      return waiting(
        'soaking',
        `${build} was superseded in ${ring} before it had soaked ${formatDuration(after.soak)}`,
      );
    return waiting('soaking', `${build} soaks in ${ring} until ${ringDate(soakedAt)}`, soakedAt);
  }
  const wanted = after.require.verifiedRatio;
  if (wanted !== undefined) {
    const ratio = verifiedRatio(earlier.counts, r);
    if (ratio === undefined || ratio < wanted)
      return waiting(
        'require',
        `${build} waits in ${ring}: ${ratio === undefined ? 'no Collector has an outcome' : `${fmt(ratio)} of its Collectors verified`}, below the ${fmt(wanted)} required`,
      );
  }
  return { kind: 'released', convergedAt: r.convergedAt };
}

const fmt = (ratio: number) => String(Math.floor(ratio * 1000) / 1000);
