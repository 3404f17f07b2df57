/** The small value schemas the fleet file's parts share. */
import { z } from 'zod';
import { isBuildVersion } from '../lib/version.js';

export const buildVersion = z.string().refine(isBuildVersion, {
  message: 'expected a build version shaped <major>.<minor>-<build>, e.g. 19.470-4',
});
export const ratio = z.number().min(0, 'must be between 0 and 1').max(1, 'must be between 0 and 1');
export const positiveSeconds = z.number().positive('must be a positive number of seconds');
export const collectorId = z.number().int('must be an integer').positive('must be a positive integer');
