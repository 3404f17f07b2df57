/**
 * `complianceAlert` of a policy: the share of its selected Collectors on its target (from the
 * inventory of the whole fleet) below which, held for `for`, an alert fires. This file only
 * validates the field; the inventory, the metric and the alert rule read it (src/metrics,
 * deploy/prometheus).
 */
import { z } from 'zod';
import { durationField, ms } from './duration-field.js';

export const ComplianceAlert = z.strictObject({
  /** The alert fires while the compliant share is below this ratio (0 to 1, exclusive of 0). Required. */
  below: z
    .number({
      error: (iss) =>
        iss.input === undefined
          ? 'required field is missing'
          : `expected a number between 0 and 1, got ${JSON.stringify(iss.input)}`,
    })
    .gt(0, 'must be above 0 (nothing is ever below 0)')
    .max(1, 'must be at most 1'),
  /** How long the share must stay below before the alert fires, 1m to 90d. Default 1d. */
  for: durationField({ min: ms('1m'), max: ms('90d') }).default(ms('1d')),
});
export type ComplianceAlert = z.infer<typeof ComplianceAlert>;
