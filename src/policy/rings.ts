/**
 * `after` of a policy: the ring it follows. A build starts in this policy only once the earlier
 * policy's rollout of that build converged without a halt or an unresolved quarantine, has soaked
 * there for `soak` since it converged, and meets `require`; a later halt or rollback of that build
 * in the earlier ring pauses this one (rollout/tick/ring-gate.ts judges it). The names are
 * checked across files at load (an unknown policy, a cycle: check-rings.ts).
 */
import { z } from 'zod';
import { durationField } from './duration-field.js';

const RING_NAME = /^[a-z0-9][a-z0-9-]*$/;

export const RingRequire = z.strictObject({
  /**
   * The least share of the earlier rollout's Collectors with an outcome that `succeeded` (verified
   * alive on the build when the policy verifies), 0 to 1. Default none.
   */
  verifiedRatio: z
    .number({ error: (iss) => `expected a number between 0 and 1, got ${JSON.stringify(iss.input)}` })
    .min(0, 'must be between 0 and 1')
    .max(1, 'must be between 0 and 1')
    .optional(),
});
export type RingRequire = z.infer<typeof RingRequire>;

export const After = z.strictObject({
  /** The name of the earlier policy (the ring this one follows). Required. */
  policy: z
    .string({
      error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected a policy name'),
    })
    .regex(RING_NAME, 'expected a policy name (lowercase letters, digits and dashes)'),
  /** How long the build must have run in the earlier ring since it converged there. Default 0s. */
  soak: durationField({ min: 0 }).default(0),
  /** What the earlier rollout must show besides converging. Default none. */
  require: RingRequire.prefault({}),
});
export type After = z.infer<typeof After>;
