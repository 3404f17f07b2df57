/**
 * The fleet file of one organization: what a simulated Collector Upgrade Service holds (builds,
 * users, Collectors, at most 10,000 of them as the vendor allows) and how it behaves (upgrade
 * durations and failures: behaviour-schema.ts; faults, scheduled ones: fault-schema.ts). Every
 * duration and rate is in simulated time. Several organizations in one file (`orgs:`):
 * fleet-source.ts. Names are fixed by issue #2; see docs/simulator.md "Fleet file" for each field.
 */
import { z } from 'zod';
import { compareBuildVersions, isBuildVersion } from '../lib/version.js';
import { Behaviour } from './behaviour-schema.js';
import { ScheduledFault } from './fault-schema.js';
import { buildVersion, collectorId, positiveSeconds, ratio } from './schema-values.js';

export {
  Behaviour,
  type Delay,
  type Duration,
  FailureCauses,
  FailureRatioBy,
  StopAfterUpgrade,
  UpgradeSeconds,
} from './behaviour-schema.js';

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
    /** Shown only by GET /collectors (the inventory), as the vendor's Collector records carry them. */
    category: z.string().optional(),
    description: z.string().optional(),
    /** Key-value metadata of the Collector (e.g. `_budget`); default {}. */
    fields: z.record(z.string(), z.string()).optional(),
    /** The type of its Source (health events' breaks select by it); unset = drawn from behaviour.healthEvents.sourceTypes. */
    sourceType: z.string().min(1).optional(),
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
    /** Faults of the whole organization for a while (outage, unauthorized, ...); see fault-schema.ts. */
    schedule: z.array(ScheduledFault).optional(),
  })
  .strict();

/** The vendor's limit: an organization holds at most this many Collectors. */
export const MAX_ORG_COLLECTORS = 10_000;

/** The fields of one organization: a whole fleet file without `orgs`, or one entry of `orgs`. */
const orgShape = {
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
};

type OrgFields = z.infer<z.ZodObject<typeof orgShape>>;

/** Checks across fields of one organization: unique ids, known versions, the vendor's cap. */
function checkOrg(fleet: OrgFields, ctx: z.RefinementCtx): void {
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
  const generated = fleet.generate?.count ?? 0;
  const total = fleet.collectors.length + generated;
  if (total > MAX_ORG_COLLECTORS) {
    const n = (x: number) => x.toLocaleString('en-US');
    ctx.addIssue({
      code: 'custom',
      path: fleet.generate ? ['generate', 'count'] : ['collectors'],
      message:
        `an organization holds at most ${n(MAX_ORG_COLLECTORS)} Collectors (the vendor's limit); this one ` +
        `would hold ${n(total)} (${n(fleet.collectors.length)} explicit + ${n(generated)} generated): ` +
        'split the fleet into several organizations (orgs:)',
    });
  }
}

/** A fleet file of one organization (named `default`): the fleet file as it always was. */
export const FleetFile = z.object(orgShape).strict().superRefine(checkOrg);
export type FleetFile = z.infer<typeof FleetFile>;
/** What a caller may pass: the fleet file as written, before defaults. */
export type FleetFileInput = z.input<typeof FleetFile>;

/** An organization's name: a short slug. */
export const OrgName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,31}$/, 'must be a short slug: a lowercase letter, then up to 31 of a-z, 0-9, -');

/** One entry of `orgs`: a name and the fields of a one-organization fleet file. */
export const OrgFleet = z
  .object({ name: OrgName, ...orgShape })
  .strict()
  .superRefine(checkOrg);
export type OrgFleet = z.infer<typeof OrgFleet>;
export type OrgFleetInput = z.input<typeof OrgFleet>;
