/** The small value schemas the fleet file's parts share. */
import { z } from 'zod';
import { isBuildVersion } from '../lib/version.js';

export const buildVersion = z.string().refine(isBuildVersion, {
  message: 'expected a build version shaped <major>.<minor>-<build>, e.g. 19.470-4',
});
export const ratio = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
export const positiveSeconds = z.number().positive('must be a positive number of seconds');
export const collectorId = z.number().int('must be an integer').positive('must be a positive integer');

export const Duration = z
  .object({ median: positiveSeconds, p95: positiveSeconds })
  .strict()
  .refine((d) => d.p95 >= d.median, { message: 'p95 must not be below median' });
export type Duration = z.infer<typeof Duration>;

/** A fixed number of seconds, or a log-normal draw `{median, p95}`. */
export const Delay = z.union([z.number().min(0, 'must not be negative'), Duration]);
export type Delay = z.infer<typeof Delay>;
