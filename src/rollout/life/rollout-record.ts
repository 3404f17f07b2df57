/**
 * What a rollout records of itself (one Redis hash per rollout); the one codec between that hash
 * and the typed record is rollout-codec.ts. A rollout is written only through a typed patch (`RolloutPatch`:
 * a field's new value, or `null` to clear it) or a move of its phase (rollout-store.ts); the
 * field table below says how each field is kept, so no caller writes a raw field.
 */
import type { AnalysisRun } from '../../analysis/index.js';
import type { FailureCauses } from '../../policy/failure-causes.js';
import type { VerifySettings } from '../../policy/verify.js';
import { DEFAULT_ORG, type LifeSettings } from '../collector/index.js';
import type { RolloutPhase } from './rollout-phase.js';

/** What the workers need of a rollout's policy; stored with the rollout, so workers need no policy files. */
export interface RolloutSettings extends LifeSettings {
  pollInitialMs: number;
  pollMaxMs: number;
  pollJitter: number;
  taskTimeoutMs: number;
  /** A not_alive Collector seen alive is upgraded only until this long after the rollout began (none: always). */
  notAliveUntilMs?: number;
  /** Verification of successes (policy `verify`); absent: a task's success is the outcome. */
  verify?: VerifySettings;
  /** What a failed task leads to by its message's class (policy `failureCauses`); absent: `failed`. */
  causes?: FailureCauses;
}

export interface RolloutRecord {
  id: string;
  policy: string;
  /** The policy's target as written: `latest` or a build. */
  target: string;
  /** The build of its id: the target's build, or the newest of its organizations' (`builds`). */
  build: string;
  /**
   * The build of each of its organizations, where it is not `build` (`latest` resolves in each
   * organization's build list, and two may differ). Absent: every organization's is `build`.
   */
  builds?: Record<string, string>;
  /** The organizations it covers (the policy's `orgs` among the settings'). Absent: the default one. */
  orgs?: string[];
  phase: RolloutPhase;
  startedAt: number;
  updatedAt: number;
  convergedAt?: number;
  maxInFlight: number;
  settings: RolloutSettings;
  /** Status reads of the whole rollout. */
  statusReads: number;
  /** Create requests of the whole rollout. */
  createRequests: number;
  /** Full scans of the upgradable Collectors. */
  scans: number;
  lastScanAt?: number;
  /** Why the rollout halted. */
  haltReason?: string;
  /** Why the rollout is paused (rollout-phase.ts PAUSE_REASONS). */
  pauseReason?: string;
  /** Counts per state when an operator resumed a halted rollout: the gate judges what came after. */
  gateBaseline?: Record<string, number>;
  /** Clock ms after a task's request of its first status read, learned by the scheduler. */
  firstPollMs?: number;
  /** Who paused it and when (an operator), for `status`. */
  pausedBy?: string;
  pausedAt?: number;
  /** Organizations whose part an operator paused (`pause --org`): their Collectors are not admitted. */
  pausedOrgs?: OrgPause[];
  /** Why and by whom it was aborted. */
  abortReason?: string;
  /** An operator resumed the aborted rollout: its policy may start a newer build. */
  releasedAt?: number;
  /** The policy as it was when the rollout last took it (a changed policy releases an abort). */
  policyHash?: string;
  /** The wave in progress (0-based), and what the next one waits for. */
  wave: WaveProgress;
  /** Canaries found so far (Collectors a first wave's `select` picks). */
  canaries: number;
  /**
   * Collectors found below the policy's `minimumBuild` (admission/below-minimum.ts): moved first, in
   * a wave of their own outside the policy's waves. Counted by the Collector store's Lua.
   */
  belowMinimum?: number;
  /** The policy's `minimumBuild` when the rollout last took its policy, for `status`. */
  minimumBuild?: string;
  /** Collectors a known issue of the build left out (`skipped`) or put on the worklist (`manual`) before they started. */
  knownIssueSkipped?: number;
  knownIssueManual?: number;
  /** Collectors a new health event made unhealthy during verification (listings/health-verdicts.ts). Counted by the Collector store's Lua. */
  healthUnhealthy?: number;
  /** The policy's known issues that match the rollout's build, for `status` (policy/known-issues.ts). */
  knownIssues?: KnownIssueNote[];
  /**
   * Why the ring the policy follows last paused it (`halted`, `aborted`, `rolled_back`): not paused
   * again for the same reason once an operator resumed it (tick/target-chooser.ts).
   */
  ringPausedFor?: string;
  /** Per-wave counts when an operator resumed: the gate judges each wave on what came after. */
  waveBaseline?: Record<string, number>[];
  /** Clock ms an upgrade is expected to take (the learned 95th percentile), for the window fit. */
  expectedMs?: number;
  /** Why nothing starts now, in words, as the scheduler last saw it ('' when nothing holds it). */
  holding?: string;
  /**
   * Clock ms between two passes over the listings that watch the tasks under way (listing-pass.ts),
   * while the scheduler watches them; then a task's job sleeps until the scheduler wakes it.
   */
  watchMs?: number;
  /** Rollbacks of this rollout's Collectors (operator/rollback.ts): what was taken back, and what could not be. */
  rollbacks?: RollbackEntry[];
  /** This rollout takes Collectors of that rollout back to their previous builds. */
  rollbackOf?: string;
  /**
   * A one-off's named Collectors that its first scan did not find, and why (one-off/one-off-starts.ts);
   * `[]` once every one was found. Absent until that first scan was looked at.
   */
  unmatched?: UnmatchedCollector[];
  /** Cohorts whose failure rate was significantly above the gate: their waiting Collectors are held. */
  quarantined?: CohortQuarantine[];
  /** Cohorts an operator released (`retry --only quarantined`): never quarantined again in this rollout. */
  cohortsReleased?: string[];
  /** The analysis gate of the wave that waits for it (src/analysis): its measurements so far. */
  analysisRun?: AnalysisRun;
  /** The wave (0-based) `analysisRun` belongs to. */
  analysisWave?: number;
  /** Its verdict as last judged, for `status`: `running: 2 of 5 measured`, `failed: ...`. */
  analysisVerdict?: string;
}

export interface RollbackEntry {
  /** The request it carried out (a request carried out twice after a crash adds nothing). */
  request: string;
  /** The organization of its Collectors (absent: the default one). */
  org?: string;
  /** The one-off rollout's policy that takes them back (`rollback-...`), or none when the build is gone. */
  policy?: string;
  /** The build they go back to. */
  build: string;
  collectors: number;
  /** Their ids when the build is no longer offered (at most ROLLBACK_IDS_SHOWN). */
  ids?: number[];
  /** `started`, or `unavailable`: the service no longer offers the build (reported, not guessed). */
  state: 'started' | 'unavailable';
  /**
   * What became of its Collectors when its rollout was forgotten (operator/forget.ts `forget`, or
   * retention): the account (rollback-account.ts) keeps them once that rollout is gone.
   */
  final?: RollbackTally & { phase: string };
  at: number;
  by: string;
  reason: string;
}

/** A rollback rollout's Collectors by what became of them (rollback-account.ts). */
export interface RollbackTally {
  back: number;
  onBuild: number;
  notAlive: number;
  failed: number;
  underWay: number;
}

/** A known issue of the rollout's build as `status` shows it. */
export interface KnownIssueNote {
  build: string;
  action: 'skip' | 'manual';
  note: string;
  /** The selection, in words (`osName=Mac OS X`); absent: every Collector. */
  where?: string;
}

/** Why a Collector a one-off names is not upgraded by it (not found by its scan). */
export const UNMATCHED_FINDINGS = ['hosted', 'not_found', 'offline', 'on_build', 'not_listed'] as const;
export type UnmatchedFinding = (typeof UNMATCHED_FINDINGS)[number];

export interface UnmatchedCollector {
  id: number;
  /** Its organization (absent: the default one). */
  org?: string;
  finding: UnmatchedFinding;
}

export const FINDING_WORDS: Record<UnmatchedFinding, string> = {
  hosted: 'hosted (the service upgrades hosted Collectors itself)',
  not_found: 'not found in the organization',
  offline: 'offline',
  on_build: 'on the build already',
  not_listed: 'not offered for the upgrade (hosted, unknown, offline or on the build)',
};

/** `3 hosted (...): 7, 9; not found in the organization: 99` — ids by finding (at most 10 each). */
export function describeUnmatched(list: readonly UnmatchedCollector[]): string {
  const by = new Map<UnmatchedFinding, string[]>();
  for (const u of list)
    by.set(u.finding, [...(by.get(u.finding) ?? []), u.org ? `${u.org}/${u.id}` : String(u.id)]);
  return [...by]
    .map(
      ([f, ids]) =>
        `${FINDING_WORDS[f]}: ${ids.slice(0, 10).join(', ')}${ids.length > 10 ? ` and ${ids.length - 10} more` : ''}`,
    )
    .join('; ');
}

export interface OrgPause {
  org: string;
  by: string;
  at: number;
}

export interface CohortQuarantine {
  cohort: string;
  /** Why, in words: failures of outcomes, the bound, the gate. */
  reason: string;
  at: number;
  /** Collectors held when it was quarantined. */
  held: number;
}

/** Where a rollout's waves stand: written by the scheduler and by `promote`, compare-and-set on `seq`. */
export interface WaveProgress {
  /** The wave in progress, 0-based. */
  index: number;
  /**
   * After the wave's last outcome: baking until `bakeUntil`, its analysis gate running (the run is
   * the rollout's `analysisRun`), or awaiting an operator's promote.
   */
  waitingFor?: 'bake' | 'analysis' | 'approval';
  bakeUntil?: number;
  /** `promote --full`: every remaining wave at once. */
  full?: boolean;
  /**
   * Awaiting approvals by several people (`approval: { approvers, from }`): how many, who may,
   * and who approved so far (operator/approve.ts).
   */
  approval?: { approvers: number; from?: string[]; by: { name: string; at: number }[] };
  /** Waves of the rollout's plan when the scheduler last looked (for `status` and `promote`). */
  of?: number;
  /** Times the progress was written (the compare-and-set token). */
  seq: number;
}

/** The build a rollout moves Collectors of organization `org` to. */
export function buildOf(rollout: Pick<RolloutRecord, 'build' | 'builds'>, org: string): string {
  return rollout.builds?.[org] ?? rollout.build;
}

/** The organizations a rollout covers (the default one for a rollout from before organizations). */
export function orgsOf(rollout: Pick<RolloutRecord, 'orgs'>): string[] {
  return rollout.orgs?.length ? rollout.orgs : [DEFAULT_ORG];
}
