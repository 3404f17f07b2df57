/**
 * The fleet file: what a simulated Collector Upgrade Service holds (builds, users, Collectors)
 * and how it behaves (upgrade durations, failures, faults). Every duration and rate is in
 * simulated time. Names are fixed by issue #2; see docs/simulator.md "Fleet file" for each field.
 */
import { z } from 'zod';
import { compareBuildVersions, isBuildVersion } from '../lib/version.js';

const buildVersion = z.string().refine(isBuildVersion, {
  message: 'expected a build version shaped <major>.<minor>-<build>, e.g. 19.470-4',
});
const ratio = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
const positiveSeconds = z.number().positive('must be a positive number of seconds');
const collectorId = z.number().int('must be an integer').positive('must be a positive integer');

export const Outcome = z.enum(['succeed', 'fail', 'stuck']);
export type Outcome = z.infer<typeof Outcome>;

/** Class of a failed task's cause; each has its own realistic messages (see failure-causes.ts). */
export const FailureCause = z.enum(['disk_space', 'upgrades_disabled', 'permission', 'network', 'unknown']);
export type FailureCause = z.infer<typeof FailureCause>;

export const RateLimit = z
  .object({
    /** Requests per simulated second per user (accessId); 0 turns the limit off. */
    perSecond: z.number().min(0).default(4),
    /** Concurrent requests per access key; 0 turns the limit off. */
    concurrent: z.number().int().min(0).default(10),
  })
  .strict();
export type RateLimit = z.infer<typeof RateLimit>;

export const FleetUser = z
  .object({
    accessId: z.string().min(1, 'must not be empty'),
    accessKey: z.string().min(1, 'must not be empty'),
    /** When set, the user may use only these Collectors (others answer collector.invalid). */
    collectors: z.array(collectorId).optional(),
    /** Overrides faults.rateLimit for this user. */
    rateLimit: RateLimit.partial().optional(),
    /**
     * false: the key may read but not create tasks (it lacks the capability to manage
     * Collectors): every create answers 403 `forbidden`. Default true.
     */
    canCreate: z.boolean().default(true),
  })
  .strict();
export type FleetUser = z.infer<typeof FleetUser>;

export const FleetCollector = z
  .object({
    id: collectorId,
    name: z.string().min(1).optional(),
    hostName: z.string().min(1).optional(),
    version: buildVersion.optional(),
    type: z.enum(['Installable', 'Hosted']).default('Installable'),
    alive: z.boolean().default(true),
    timeZone: z.string().min(1).optional(),
    osName: z.string().optional(),
    osVersion: z.string().optional(),
    osArch: z.string().optional(),
    ephemeral: z.boolean().default(false),
    sourceSyncMode: z.string().default('UI'),
    /** Forced outcome of every task on this Collector; unset = drawn from `behaviour`. */
    outcome: Outcome.optional(),
    /** Duration of one upgrade step on this Collector; unset = drawn from `behaviour.upgradeSeconds`. */
    upgradeSeconds: positiveSeconds.optional(),
    /** Failure message of this Collector's failed tasks; unset = a realistic reason. */
    failureMessage: z.string().optional(),
    /** Cause of this Collector's failed tasks (a message of that class); unset = drawn. */
    failureCause: FailureCause.optional(),
    /** Whether this Collector stops heartbeating after a successful upgrade; unset = drawn. */
    stopsAfterUpgrade: z.boolean().optional(),
    /** An offline Collector comes back after this many seconds; unset = stays as it is. */
    offlineForSeconds: positiveSeconds.optional(),
    /** This Collector goes offline and comes back over time (see faults.flap). */
    flap: z.boolean().default(false),
  })
  .strict();
export type FleetCollector = z.infer<typeof FleetCollector>;

export const Generate = z
  .object({
    count: z.number().int().min(0).max(2_000_000),
    seed: z.number().int().default(1),
    hostedRatio: ratio.default(0.02),
    offlineRatio: ratio.default(0.05),
    /** Share of generated Collectors already on the latest build. */
    upToDateRatio: ratio.default(0.1),
    /** Id of the first generated Collector. */
    idStart: collectorId.default(100_000_000),
  })
  .strict();

const Duration = z
  .object({ median: positiveSeconds, p95: positiveSeconds })
  .strict()
  .refine((d) => d.p95 >= d.median, { message: 'p95 must not be below median' });

/** A fixed number of seconds, or a log-normal draw `{median, p95}`. */
const Delay = z.union([z.number().min(0, 'must not be negative'), Duration]);
export type Delay = z.infer<typeof Delay>;

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
    upgradeSeconds: Duration.default({ median: 180, p95: 600 }),
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
  })
  .strict();
export type Behaviour = z.infer<typeof Behaviour>;

export const Flap = z
  .object({
    /** Mean time a flapping Collector stays online, and offline. */
    onlineSeconds: positiveSeconds.default(1200),
    offlineSeconds: positiveSeconds.default(600),
  })
  .strict();

export const Faults = z
  .object({
    rateLimit: RateLimit.default({ perSecond: 4, concurrent: 10 }),
    /** Share of API requests answered 500 or 503 (before anything is done). */
    errorRatio: ratio.default(0),
    /** Added latency per API request, in simulated milliseconds: a number, or a range. */
    latencyMs: z
      .union([z.number().min(0), z.object({ min: z.number().min(0), max: z.number().min(0) }).strict()])
      .default(0),
    /** Share of API requests whose connection is dropped after the request was carried out. */
    dropRatio: ratio.default(0),
    /** Share of Collectors that go offline and come back over time. */
    flapRatio: ratio.default(0),
    flap: Flap.default({ onlineSeconds: 1200, offlineSeconds: 600 }),
    /** Share of 401s answered with an HTML page instead of JSON, as some real deployments do. */
    htmlUnauthorizedRatio: ratio.default(0),
  })
  .strict();

export const FleetFile = z
  .object({
    builds: z
      .array(buildVersion)
      .min(1, 'at least one build is needed')
      .superRefine((builds, ctx) => {
        for (let i = 1; i < builds.length; i++) {
          const a = builds[i - 1] as string;
          const b = builds[i] as string;
          if (isBuildVersion(a) && isBuildVersion(b) && compareBuildVersions(a, b) >= 0) {
            ctx.addIssue({
              code: 'custom',
              path: [i],
              message: `builds must go from oldest to newest: ${b} is not newer than ${a}`,
            });
          }
        }
      }),
    users: z
      .array(FleetUser)
      .min(1, 'at least one user is needed')
      .default([{ accessId: 'demo', accessKey: 'demo-secret', canCreate: true }]),
    collectors: z.array(FleetCollector).default([]),
    generate: Generate.optional(),
    behaviour: Behaviour.default(Behaviour.parse({})),
    faults: Faults.default(Faults.parse({})),
    listOffline: z.boolean().default(true),
    /** Seed of the behaviour's randomness (durations, outcomes, faults). */
    seed: z.number().int().default(1),
  })
  .strict()
  .superRefine((fleet, ctx) => {
    const seen = new Map<number, number>();
    fleet.collectors.forEach((c, i) => {
      if (seen.has(c.id))
        ctx.addIssue({
          code: 'custom',
          path: ['collectors', i, 'id'],
          message: `duplicate id ${c.id} (also collectors[${seen.get(c.id)}])`,
        });
      seen.set(c.id, i);
      if (c.version && !fleet.builds.includes(c.version)) {
        ctx.addIssue({
          code: 'custom',
          path: ['collectors', i, 'version'],
          message: `${c.version} is not one of builds`,
        });
      }
    });
    const ids = new Set<string>();
    fleet.users.forEach((u, i) => {
      if (ids.has(u.accessId))
        ctx.addIssue({
          code: 'custom',
          path: ['users', i, 'accessId'],
          message: `duplicate accessId ${u.accessId}`,
        });
      ids.add(u.accessId);
    });
  });
export type FleetFile = z.infer<typeof FleetFile>;
/** What a caller may pass: the fleet file as written, before defaults. */
export type FleetFileInput = z.input<typeof FleetFile>;
