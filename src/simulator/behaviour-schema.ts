/**
 * The fleet file's `behaviour`: how long upgrades take (by OS, in steps), how tasks fail and why,
 * and what Collectors do after an upgrade. Every duration is in simulated seconds; see
 * docs/simulator.md "Fleet file" and "How long an upgrade takes".
 */
import { z } from 'zod';
import { HealthEventsBehaviour } from './health-schema.js';
import { buildVersion, Delay, Duration, positiveSeconds, ratio } from './schema-values.js';

export { Delay, Duration };

/**
 * The log-normal duration of one upgrade step; `byOs` gives Collectors whose osName is a key a
 * distribution of their own (others keep `median`/`p95`). A Collector's `upgradeSeconds` wins.
 */
export const UpgradeSeconds = z
  .object({ median: positiveSeconds, p95: positiveSeconds, byOs: z.record(z.string(), Duration).optional() })
  .strict()
  .refine((d) => d.p95 >= d.median, { message: 'p95 must not be below median' });
export type UpgradeSeconds = z.infer<typeof UpgradeSeconds>;

/** Ratio by exact value of a Collector field (`osName` or `osArch` as the listing shows it). */
const RatioByValue = z.record(z.string(), ratio);

export const StopAfterUpgrade = z
  .object({
    /** Share of Collectors that stop heartbeating some time after each successful upgrade. */
    ratio: ratio.default(0),
    /** Overrides `ratio` for Collectors whose osName is a key. */
    byOs: RatioByValue.optional(),
    /** Time from the task's success to the stop. */
    afterSeconds: Delay.default({ median: 120, p95: 600 }),
    /** A stopped Collector is restarted this long after it stopped; unset = only by /_sim. */
    restartAfterSeconds: Delay.optional(),
  })
  .strict();
export type StopAfterUpgrade = z.infer<typeof StopAfterUpgrade>;

export const FailureRatioBy = z
  .object({
    /** Failure ratio of the tasks of Collectors whose osName is a key (replaces failureRatio). */
    osName: RatioByValue.optional(),
    /** Failure ratio of the tasks of Collectors whose osArch is a key (replaces failureRatio). */
    osArch: RatioByValue.optional(),
    /** The ratios above apply only to tasks to one of these builds; unset = every build. */
    builds: z.array(buildVersion).optional(),
  })
  .strict();
export type FailureRatioBy = z.infer<typeof FailureRatioBy>;

/** Relative weights of the failure causes; a cause left out has weight 0. */
const weight = z.number().min(0, 'must not be negative').optional();
export const FailureCauses = z
  .object({
    disk_space: weight,
    upgrades_disabled: weight,
    permission: weight,
    network: weight,
    unknown: weight,
  })
  .strict()
  .refine((w) => Object.values(w).some((v) => (v ?? 0) > 0), {
    message: 'at least one cause needs a positive weight',
  });
export type FailureCauses = z.infer<typeof FailureCauses>;

export const Behaviour = z
  .object({
    upgradeSeconds: UpgradeSeconds.default({ median: 180, p95: 600 }),
    failureRatio: ratio.default(0.02),
    stuckRatio: ratio.default(0.01),
    /** A move across more than this many builds goes in increments of at most this many. 0 = never. */
    incrementalAbove: z.number().int().min(0).default(2),
    /** Seconds from request to "pending" (status 1). */
    issueSeconds: z.number().min(0).default(2),
    /** The Collector picks up an issued upgrade at its next heartbeat, at most this many seconds later. */
    heartbeatSeconds: positiveSeconds.default(15),
    /** A task not succeeded this long after its request fails as timed out. */
    taskTimeoutSeconds: positiveSeconds.default(1800),
    /** A Collector that stopped heartbeating is listed alive: false this long after its last heartbeat. */
    offlineAfterSeconds: positiveSeconds.default(1800),
    /** Collectors that stop heartbeating after a successful upgrade (off by default). */
    stopAfterUpgrade: StopAfterUpgrade.default(StopAfterUpgrade.parse({})),
    /** A bad build for a cohort: failure ratios by osName / osArch (unset = failureRatio for all). */
    failureRatioBy: FailureRatioBy.optional(),
    /** Weights of the failure causes; unset = today's five messages, equally likely. */
    failureCauses: FailureCauses.optional(),
    /** The Health Events API: builds that break collection, noise, availability (health-schema.ts). */
    healthEvents: HealthEventsBehaviour.default(HealthEventsBehaviour.parse({})),
  })
  .strict();
export type Behaviour = z.infer<typeof Behaviour>;
