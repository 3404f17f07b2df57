/**
 * Faults an organization can suffer for a while: the kinds, their parameters, a window of the
 * fleet file's `faults.schedule` (simulated seconds from the simulator's start) and the body of
 * `POST /_sim/faults`. What each kind does to a request: org-faults.ts; docs/simulator.md
 * "Faults of an organization".
 */
import { z } from 'zod';
import { positiveSeconds, ratio } from './schema-values.js';

export const FAULT_KINDS = ['outage', 'unauthorized', 'rateLimitStorm', 'slow', 'malformed'] as const;
export const FaultKind = z.enum(FAULT_KINDS);
export type FaultKind = z.infer<typeof FaultKind>;

/** Bodies of a malformed 200 answer: JSON cut short, an HTML page, or fields of the wrong types. */
export const MalformedShape = z.enum(['truncated', 'html', 'types']);
export type MalformedShape = z.infer<typeof MalformedShape>;

const Outage = z
  .object({
    kind: z.literal('outage'),
    /** `unavailable`: every request answers 503 service.unavailable; `refuse`: the connection is reset unanswered. */
    mode: z.enum(['unavailable', 'refuse']).default('unavailable'),
  })
  .strict();
const Unauthorized = z.object({ kind: z.literal('unauthorized') }).strict();
const RateLimitStorm = z
  .object({
    kind: z.literal('rateLimitStorm'),
    /** Share of the organization's requests answered 429 rate.limit.exceeded. */
    ratio: ratio.default(0.9),
  })
  .strict();
const Slow = z
  .object({
    kind: z.literal('slow'),
    /** Latency added to each request of the organization, in simulated ms. */
    latencyMs: z.number().min(0, 'must not be negative').default(5000),
  })
  .strict();
const Malformed = z
  .object({
    kind: z.literal('malformed'),
    /** Share of the organization's 200 answers whose body does not match the interface. */
    ratio: ratio.default(0.5),
    /** One shape for all; unset: each malformed answer draws one of the three. */
    shape: MalformedShape.optional(),
  })
  .strict();

const KIND_ERROR = `kind must be one of ${FAULT_KINDS.join(', ')}`;
const kindError = {
  error: (issue: { code?: string }) => (issue.code === 'invalid_union' ? KIND_ERROR : undefined),
};

export const FaultSpec = z.discriminatedUnion(
  'kind',
  [Outage, Unauthorized, RateLimitStorm, Slow, Malformed],
  kindError,
);
export type FaultSpec = z.infer<typeof FaultSpec>;

const window = {
  /** Start, in simulated seconds from the simulator's start. */
  from: z.number().min(0, 'must not be negative'),
  /** Length in simulated seconds; unset: to the end of the run. */
  for: positiveSeconds.optional(),
};

/** A window of `faults.schedule`: a fault of `kind` from `from` for `for` simulated seconds. */
export const ScheduledFault = z.discriminatedUnion(
  'kind',
  [
    Outage.extend(window),
    Unauthorized.extend(window),
    RateLimitStorm.extend(window),
    Slow.extend(window),
    Malformed.extend(window),
  ],
  kindError,
);
export type ScheduledFault = z.infer<typeof ScheduledFault>;

const lasting = {
  /** How long it lasts, in simulated seconds; unset: until DELETE /_sim/faults. */
  forSeconds: positiveSeconds.optional(),
};

/** Body of POST /_sim/faults?org=NAME. */
export const FaultSwitch = z.discriminatedUnion(
  'kind',
  [
    Outage.extend(lasting),
    Unauthorized.extend(lasting),
    RateLimitStorm.extend(lasting),
    Slow.extend(lasting),
    Malformed.extend(lasting),
  ],
  kindError,
);
export type FaultSwitch = z.infer<typeof FaultSwitch>;
