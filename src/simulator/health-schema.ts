/**
 * The fleet file's `behaviour.healthEvents`: the Health Events API of the simulated account
 * (api-facts.md, last section). Builds from HEALTH_EVENTS_SINCE on send events; older ones send
 * none. `breaks` make a build stop a Source of a share of the Collectors of a kind (OS, source
 * type) some time after the upgrade to it, while they stay alive; `noiseRatio` gives Collectors
 * an unrelated unresolved event from before the simulator started. See docs/simulator.md
 * "Health events".
 */
import { z } from 'zod';
import { buildVersion, Delay, ratio } from './schema-values.js';

/** The first build that sends health events (the vendor's documentation of health events). */
export const HEALTH_EVENTS_SINCE = '19.308-2';

export const HealthBreak = z
  .object({
    /** The build that breaks collection. */
    build: buildVersion,
    /** Share of the matching Collectors it breaks (drawn from the seed and the id). */
    ratio,
    /** Only Collectors with this osName (unset: any). */
    osName: z.string().min(1).optional(),
    /** Only Collectors whose Source is of this type (unset: any). */
    sourceType: z.string().min(1).optional(),
    /** Time from the task's success to the break. Default 120 s. */
    afterSeconds: Delay.default(120),
    /** The event's `details.trackerId`. Default FileCollectionBroken. */
    trackerId: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9]{0,63}$/, 'expected a tracker id such as FileCollectionBroken')
      .default('FileCollectionBroken'),
    severity: z.enum(['Error', 'Warning']).default('Error'),
  })
  .strict();
export type HealthBreak = z.infer<typeof HealthBreak>;

export const HealthEventsBehaviour = z
  .object({
    /** false: the account's plan has no health events: both endpoints answer 403. Default true. */
    available: z.boolean().default(true),
    /** Share of Collectors (on a build that sends events) with an unrelated unresolved event from before the start. */
    noiseRatio: ratio.default(0),
    /** Source types by weight: each installed Collector has one Source, of a type drawn from these. */
    sourceTypes: z
      .record(z.string().min(1), z.number().positive('must be a positive weight'))
      .refine((w) => Object.keys(w).length > 0, { message: 'give at least one source type' })
      .default({ LocalFile: 1 }),
    breaks: z.array(HealthBreak).default([]),
  })
  .strict();
export type HealthEventsBehaviour = z.infer<typeof HealthEventsBehaviour>;
