/**
 * `verify` of a policy: a task's `succeeded` is not the end of a Collector's upgrade. The
 * Collector must then be seen alive on the build in the service's listings within `within`, and
 * keep heartbeating (its `lastSeenAlive` advancing) through `bake`; otherwise it ends `unhealthy`
 * (src/rollout/listings/verify-collectors.ts). `verify: false` turns it off: the task's word is taken.
 *
 * Defaults, and why:
 * - `within: 10m`: a Collector restarts on its new build and heartbeats every 15 s; ten minutes
 *   leave room for a slow restart and for the listing pages shared by every Collector under
 *   verification, read at most once per `interval`;
 * - `bake: 5m`: twenty missed heartbeats are no accident, and five minutes catch a Collector that
 *   stops soon after its restart (the vendor documents that a Mac Collector "will stop" after an
 *   upgrade until it is restarted by hand), while adding little to a wave;
 * - `interval: 1m`: a pass costs one listing page per 1000 Collectors; once a minute keeps it a
 *   small share of a 4 requests/s budget.
 * - `healthEvents: true`: alive is not enough (a Collector can heartbeat on its new build and
 *   collect nothing); the service's health events say so (api-facts.md, last section). A
 *   Collector on a build from 19.308-2 on with a new event of a counted kind (raised after its
 *   create) before the end of its bake is `unhealthy`, the tracker as its cause. Counted by
 *   default: `severities: [Error]` (a Warning such as a throttled ingest says little of a
 *   build); `trackers` counts only those trackers, `ignore` never counts these. The account's
 *   list is read at most once per `interval`, shared by every Collector under verification.
 */
import { z } from 'zod';
import { durationField, ms } from './duration-field.js';

export const VERIFY_DEFAULTS = { within: ms('10m'), bake: ms('5m'), interval: ms('1m') } as const;

/** A tracker id as the vendor writes them (`FileCollectionBroken`). */
const trackerId = z
  .string({ error: 'expected a tracker id such as FileCollectionBroken' })
  .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'expected a tracker id such as FileCollectionBroken');

export const HEALTH_SEVERITIES = ['Error', 'Warning'] as const;

export const HealthEventsVerify = z.preprocess(
  (input) => (input === false ? { enabled: false } : input === true ? {} : input),
  z.strictObject(
    {
      /** `false` judges by heartbeat only (as does `healthEvents: false`). Default true. */
      enabled: z.boolean({ error: 'expected true or false' }).default(true),
      /** Severities that count. Default [Error]. */
      severities: z
        .array(z.enum(HEALTH_SEVERITIES, { error: 'expected Error or Warning' }))
        .min(1, 'give at least one severity')
        .default(['Error']),
      /** Only these trackers count (default: every tracker). */
      trackers: z.array(trackerId).min(1, 'give at least one tracker, or leave trackers out').optional(),
      /** These trackers never count. Default none. */
      ignore: z.array(trackerId).default([]),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type'
          ? `expected true, false or { severities, trackers, ignore }, got ${JSON.stringify(iss.input)}`
          : undefined,
    },
  ),
);
export type HealthEventsVerify = z.infer<typeof HealthEventsVerify>;

export const Verify = z.preprocess(
  (input) => (input === false ? { enabled: false } : input === true ? {} : input),
  z.strictObject(
    {
      /** `false` turns verification off (as does `verify: false`). Default true. */
      enabled: z.boolean({ error: 'expected true or false' }).default(true),
      /** Time after the task's success in which a listing must show the Collector alive on the build. Default 10m. */
      within: durationField({ min: ms('30s'), max: ms('24h') }).default(VERIFY_DEFAULTS.within),
      /** Time after that first sighting through which its heartbeat must go on. Default 5m. */
      bake: durationField({ min: ms('30s'), max: ms('24h') }).default(VERIFY_DEFAULTS.bake),
      /** Least time between two verification passes over the listing. Default 1m. */
      interval: durationField({ min: ms('5s'), max: ms('1h') }).default(VERIFY_DEFAULTS.interval),
      /** The service's health events judge the bake too (`false`: heartbeat only). Default true. */
      healthEvents: HealthEventsVerify.default({ enabled: true, severities: ['Error'], ignore: [] }),
    },
    {
      error: (iss) =>
        iss.code === 'invalid_type'
          ? `expected false or { within, bake, interval, healthEvents }, got ${JSON.stringify(iss.input)}`
          : undefined,
    },
  ),
);
export type Verify = z.infer<typeof Verify>;

/** What the rollout keeps of `verify` (in its settings, for the workers), or undefined when off. */
export interface VerifySettings {
  withinMs: number;
  bakeMs: number;
  intervalMs: number;
  /** Health events judge the bake too (absent: heartbeat only). */
  health?: HealthSettings;
}

/** Which new health events make a Collector unhealthy. */
export interface HealthSettings {
  severities: string[];
  /** Only these trackers count (absent: every one). */
  trackers?: string[];
  ignore: string[];
}

export function verifySettings(verify: Verify): VerifySettings | undefined {
  if (!verify.enabled) return undefined;
  const h = verify.healthEvents;
  return {
    withinMs: verify.within,
    bakeMs: verify.bake,
    intervalMs: verify.interval,
    ...(h.enabled
      ? {
          health: {
            severities: h.severities,
            ...(h.trackers ? { trackers: h.trackers } : {}),
            ignore: h.ignore,
          },
        }
      : {}),
  };
}
