/**
 * The rollout policy file (config/policies/*.yaml, one policy per file): which Collectors, which
 * build, and how fast and how carefully to move them. Every object is strict, so a misspelt field
 * is an error that names it. Durations are written like `90s`, `10m`, `2h` and held here in
 * milliseconds. Each field's default is stated on it and in docs/policy.md.
 */
import { z } from 'zod';
import { compareBuildVersions } from '../lib/version.js';
import { AnalysisGate } from './analysis.js';
import { FreezePeriods } from './calendar/freeze-period.js';
import { MaintenanceWindow } from './calendar/maintenance-window.js';
import { Schedule } from './calendar/schedule.js';
import { Cohorts } from './cohorts.js';
import { ComplianceAlert } from './compliance-alert.js';
import { durationField, ms } from './duration-field.js';
import { FailureCauses } from './failure-causes.js';
import { FailureGate } from './failure-gate.js';
import { KnownIssues } from './known-issues.js';
import { MaxInFlight, splitMaxInFlight } from './max-in-flight.js';
import { After } from './rings.js';
import {
  BuildVersionText,
  isEmptySelection,
  oneOrMany,
  OrgGlob as orgGlob,
  Selection,
} from './select/selection.js';
import { LATEST, parseTarget, targetHint } from './target.js';
import { Verify } from './verify.js';
import { checkWaveSelects, type Wave, WaveEntry } from './wave.js';

export { FailureGate } from './failure-gate.js';
export { LATEST } from './target.js';
export type { Wave, WaveSize } from './wave.js';
export const POLICY_NAME_PATTERN = /^[a-z0-9][a-z0-9-]*$/;

function wholeNumber(min: number, max: number) {
  return z
    .number({
      error: (iss) =>
        iss.input === undefined
          ? 'required field is missing'
          : `expected a number, got ${JSON.stringify(iss.input)}`,
    })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
}

function ratio() {
  return z
    .number({ error: (iss) => `expected a number between 0 and 1, got ${JSON.stringify(iss.input)}` })
    .min(0, 'must be between 0 and 1')
    .max(1, 'must be between 0 and 1');
}

export const NotAliveRetry = z.strictObject({
  /** Task creations tried in all (the first included) while the service answers `collector.not.alive`. Default 5. */
  attempts: wholeNumber(1, 1000).default(5),
  /** Wait between two of those attempts. Default 10m. */
  backoff: durationField().default(ms('10m')),
  /**
   * A Collector that ended `not_alive` is upgraded when a later scan lists it alive, until this
   * long after the rollout began. Default none: as long as the rollout runs.
   */
  until: durationField().optional(),
});

export const ErrorRetry = z.strictObject({
  /** Create answers that are errors other than the vendor's codes (401, 403, other 4xx, unreadable) before the Collector ends `error`. Default 3. */
  attempts: wholeNumber(1, 100).default(3),
  /** Wait after the first of them; it doubles with each (at most 30m). Default 1m. */
  backoff: durationField().default(ms('1m')),
});

export const TransientRetry = z.strictObject({
  /** Create answers that are transient errors (5xx, 429, network, after the client's own retries) before the Collector ends `error`. Default 20. */
  attempts: wholeNumber(1, 1000).default(20),
  /** Wait after the first of them; it doubles with each (at most 30m). Default 30s. */
  backoff: durationField().default(ms('30s')),
});

export const Poll = z
  .strictObject({
    /** First status read after the task was created. Default 60s. */
    initial: durationField().default(ms('60s')),
    /** Longest wait between two status reads of one task. Default 5m. */
    max: durationField().default(ms('5m')),
    /** Each wait is scaled by a random factor in [1 - jitter, 1 + jitter]. Default 0.2. */
    jitter: ratio().default(0.2),
  })
  .refine((poll) => poll.max >= poll.initial, { path: ['max'], message: 'must not be shorter than initial' });
export type Poll = z.infer<typeof Poll>;

export const ApiBudget = z.strictObject({
  /** Requests per second. Default 4 (the service's limit per user). */
  requestsPerSecond: z
    .number({ error: (iss) => `expected a number, got ${JSON.stringify(iss.input)}` })
    .positive('must be above 0')
    .max(1000, 'must be at most 1000')
    .default(4),
  /** Requests in flight at once. Default 10 (the service's limit per access key). */
  maxConcurrent: wholeNumber(1, 1000).default(10),
  /**
   * The share of `requestsPerSecond` this policy's deployment spends; the rest is left to the access
   * ID's other users. Lowers the settings' `apiBudget.share` (default 0.8), never raises it. Default none.
   */
  share: z
    .number({ error: (iss) => `expected a number, got ${JSON.stringify(iss.input)}` })
    .gt(0, 'must be above 0')
    .max(1, 'must be at most 1')
    .optional(),
});
export type ApiBudget = z.infer<typeof ApiBudget>;

/** The policy's fields as written; `Policy` (below) is what code reads. */
const PolicyFields = z.strictObject({
  /** Unique name, `[a-z0-9][a-z0-9-]*` (at most 63 characters); used in rollout ids and metric labels. Required. */
  name: z
    .string({ error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected text') })
    .max(63, 'must be at most 63 characters')
    .regex(
      POLICY_NAME_PATTERN,
      'must be lowercase letters, digits and dashes, starting with a letter or digit',
    ),
  /** Free text for operators. Default none. */
  description: z.string({ error: 'expected text' }).optional(),
  /** A disabled policy is validated and listed but starts no rollout and admits no Collector. Default true. */
  enabled: z.boolean({ error: 'expected true or false' }).default(true),
  /**
   * `latest` (follows the service's latest build), `latest-N` (the N-th build before the latest
   * in the organization's build list, target.ts) or a build such as `19.470-4`. Default `latest`.
   */
  target: z
    .string({ error: (iss) => targetHint(iss.input) })
    .refine((value) => parseTarget(value) !== undefined, { error: (iss) => targetHint(iss.input) })
    .default(LATEST),
  /**
   * A build becomes this policy's target only once this deployment first saw it in the build
   * list at least this long ago (the list carries no release date; the first sighting is kept in
   * Redis per organization and build). With `latest`/`latest-N`, the newest build at or below the
   * one named that is old enough. Default none.
   */
  minAge: durationField().optional(),
  /**
   * Collectors below this build are moved first, in a wave of their own that ignores windows,
   * freezes and the schedule (a security fix), still under `maxInFlight` and the gates. Default none.
   */
  minimumBuild: BuildVersionText.optional(),
  /**
   * The ring this policy follows: `{ policy, soak, require: { verifiedRatio } }` (rings.ts). A
   * build starts here only after it converged and soaked in that policy. Default none.
   */
  after: After.optional(),
  /**
   * Builds known to break some Collectors: `[{ build, select, action: skip|manual, note }]`
   * (known-issues.ts). Matching Collectors never get a task for such a build. Default none.
   */
  knownIssues: KnownIssues.optional(),
  /**
   * `{ below, for }`: the compliance share (selected Collectors on the target, from the fleet
   * inventory) under which an alert fires after `for` (compliance-alert.ts). Default none.
   */
  complianceAlert: ComplianceAlert.optional(),
  /** Whether Collectors on a build above the target are moved down to it. Default false (they are left alone). */
  allowDowngrade: z.boolean({ error: 'expected true or false' }).default(false),
  /**
   * The organizations the policy covers: names or globs of the settings' `orgs` (`default`
   * without them). Default: all.
   */
  orgs: oneOrMany(orgGlob, 'organization name or glob').default(['*']),
  /** Collectors the policy covers: a selection, or a list of selections of which any may match. Default: all. */
  select: oneOrMany(Selection, 'selection').default([{}]),
  /** Collectors never touched, though selected: a selection or a list (any match excludes). Default: none. */
  exclude: oneOrMany(
    Selection.refine((s) => !isEmptySelection(s), {
      message: 'an exclude entry needs at least one criterion (an empty one would exclude every Collector)',
    }),
    'selection',
    { allowEmpty: true },
  ).default([]),
  /**
   * Collectors of this policy with an unfinished task at once, across all processes: a count
   * 1..100000 or a share of the selection (`"10%"`, rounded up, at least 1). Parsed into
   * `maxInFlight` + `maxInFlightPercent` (max-in-flight.ts). Default 50.
   */
  maxInFlight: MaxInFlight.default({ kind: 'count', count: 50 }),
  /**
   * Collectors of one organization with an unfinished task at once (within `maxInFlight`, which
   * holds across organizations), 1..100000. Default none: only `maxInFlight`.
   */
  maxInFlightPerOrg: wholeNumber(1, 100_000).optional(),
  /**
   * The rollout's waves: cumulative sizes, each optionally followed by a `bake` and an
   * `approval: manual`; the first may `select` its members. Default `["100%"]`.
   */
  waves: oneOrMany(WaveEntry, 'wave')
    .default([{ size: { kind: 'percent', percent: 100 } }])
    .superRefine((waves, ctx) => checkWaveSelects(waves as Wave[], ctx)),
  /**
   * Prometheus queries that must hold after each wave (but the last) and its bake before the next
   * wave starts, for waves without an `analysis` of their own (src/policy/analysis.ts). Default none.
   */
  analysis: AnalysisGate.optional(),
  /** Halts (or aborts) a rollout whose failures climb, per type, per wave and overall. Default none. */
  failureGate: FailureGate.optional(),
  /**
   * Quarantines a cohort (by osName, osArch, fromBuild) whose failure rate is significantly above
   * `maxFailureRatio`: its waiting Collectors are held, the others go on (cohorts.ts). Default none.
   */
  cohorts: Cohorts.optional(),
  /**
   * What a failed task's message leads to, by its class (disk_space, upgrades_disabled,
   * permission, network, unknown, or the policy's own `patterns`): `retry`, `manual` (the
   * worklist) or `fail` (failure-causes.ts). Default: network retries 3 × 10m; disk_space,
   * upgrades_disabled, permission go to the worklist; unknown fails.
   */
  failureCauses: FailureCauses.prefault({}),
  /** Weekly hours in which tasks may be started; any open window suffices. Default none (always open). */
  windows: oneOrMany(MaintenanceWindow, 'window', { allowEmpty: true }).default([]),
  /** When tasks may start: `{ start, end, endBehavior: stop|abort, timeZone }` (schedule.ts). Default none (any time). */
  schedule: Schedule.optional(),
  /** Change freezes, `[{ start, end, reason, timeZone }]`, in which no task starts (freeze-period.ts). Default none. */
  freeze: FreezePeriods.default([]),
  retry: z
    .strictObject({
      /** Retries of a Collector that is not running. Default `{ attempts: 5, backoff: 10m }`. */
      notAlive: NotAliveRetry.prefault({}),
      /** Retries after create answers that are errors. Default `{ attempts: 3, backoff: 1m }`. */
      errors: ErrorRetry.prefault({}),
      /** Retries after transient create errors. Default `{ attempts: 20, backoff: 30s }`. */
      transient: TransientRetry.prefault({}),
    })
    .prefault({}),
  /** Status reads of a running task. Default `{ initial: 60s, max: 5m, jitter: 0.2 }`. */
  poll: Poll.prefault({}),
  /**
   * Local deadline of a task whose status never turns final. Default 35m (the service's 30m plus
   * 5m). At least 30m: the service keeps a task unfinished up to 30 minutes, and its in-flight
   * slot must be held until then for maxInFlight to hold.
   */
  taskTimeout: durationField({ min: ms('30m') }).default(ms('35m')),
  /** API budget of this policy's requests. Default `{ requestsPerSecond: 4, maxConcurrent: 10 }`. */
  api: ApiBudget.prefault({}),
  /**
   * After a task's success, the listings must show the Collector alive on the build within
   * `within` and its heartbeat going on through `bake` (verify.ts). `false` turns it off.
   * Default `{ within: 10m, bake: 5m, interval: 1m }`.
   */
  verify: Verify.prefault({}),
  /** Collectors per page when listing the upgradable ones, 1..1000. Default 1000. */
  pageSize: wholeNumber(1, 1000).default(1000),
});
/** A policy file, parsed: `maxInFlight` is split into a count and a percentage (max-in-flight.ts). */
export const Policy = PolicyFields.superRefine((policy, ctx) => {
  if (policy.after?.policy === policy.name)
    ctx.addIssue({ code: 'custom', path: ['after', 'policy'], message: 'a policy cannot follow itself' });
  const target = parseTarget(policy.target);
  if (
    policy.minimumBuild &&
    target?.kind === 'build' &&
    compareBuildVersions(policy.minimumBuild, target.build) > 0
  )
    ctx.addIssue({
      code: 'custom',
      path: ['minimumBuild'],
      message: `must not be above the target ${target.build}: the Collectors below it could never reach it`,
    });
}).transform(splitMaxInFlight);
export type Policy = z.infer<typeof Policy>;
/** A policy as written, before defaults (durations as text). */
export type PolicyInput = z.input<typeof Policy>;
