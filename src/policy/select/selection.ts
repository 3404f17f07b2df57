/**
 * The zod schema of a selection: the criteria that `select` and `exclude` use to pick Collectors
 * from the records of the service (id, name, hostName, osName, osArch, timeZone,
 * collectorVersion, ephemeral) and the organization each belongs to (`org`, a name of the
 * settings' `orgs`). All criteria of one selection must hold; the values listed for
 * one criterion are alternatives. Matching itself lives in select-collectors.ts.
 */
import { z } from 'zod';
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';
import { globProblem } from './compile-glob.js';

/**
 * A value or a list of values, kept as a list. An empty list is refused unless `allowEmpty`
 * (for a criterion it would match nothing, which is never what the writer meant).
 */
export function oneOrMany<T extends z.ZodType>(
  item: T,
  what: string,
  options: { allowEmpty?: boolean } = {},
) {
  const list = z.array(item, { error: `expected a ${what} or a list of them` });
  return z.preprocess(
    (value) => (Array.isArray(value) || value === undefined || value === null ? value : [value]),
    options.allowEmpty ? list : list.min(1, `list at least one ${what}, or leave the field out to match any`),
  );
}

const text = z
  .string({ error: (iss) => `expected text, got ${JSON.stringify(iss.input)}` })
  .trim()
  .min(1, 'must not be empty');

/** A glob as compile-glob.ts reads it (its header says what is refused, and why). */
const glob = text.superRefine((pattern, ctx) => {
  const problem = globProblem(pattern);
  if (problem) ctx.addIssue({ code: 'custom', message: `not a valid glob: ${problem}` });
});

/** A glob on organization names (the settings' `orgs`), e.g. `emea-*`. */
export const OrgGlob = glob;

const collectorId = z
  .number({ error: (iss) => `expected a Collector id (a whole number), got ${JSON.stringify(iss.input)}` })
  .int('expected a Collector id (a whole number)')
  .positive('a Collector id is a positive number');

/** A build version shaped `<major>.<minor>-<build>`, e.g. `19.470-4`. */
export const BuildVersionText = z
  .string({
    error: (iss) =>
      typeof iss.input === 'number'
        ? `expected a build shaped <major>.<minor>-<build>, e.g. 19.470-4 (got the number ${iss.input}: quote it and add the build)`
        : 'expected a build shaped <major>.<minor>-<build>, e.g. 19.470-4',
  })
  .refine(isBuildVersion, {
    error: (iss) =>
      `expected a build shaped <major>.<minor>-<build>, e.g. 19.470-4, got ${JSON.stringify(iss.input)}`,
  });

/**
 * A range of builds, compared numerically part by part (19.10-1 is above 19.9-1). Give at least
 * one bound: `from` (at or above), `to` (at or below), `above` (strictly above), `below`
 * (strictly below). `{ from: X, to: X }` is exactly build X.
 */
export const VersionRange = z
  .strictObject({
    from: BuildVersionText.optional(),
    to: BuildVersionText.optional(),
    above: BuildVersionText.optional(),
    below: BuildVersionText.optional(),
  })
  .superRefine((range, ctx) => {
    const { from, to, above, below } = range;
    if (!from && !to && !above && !below) {
      ctx.addIssue({ code: 'custom', message: 'give at least one of from, to, above, below' });
      return;
    }
    if (from && above)
      ctx.addIssue({
        code: 'custom',
        path: ['above'],
        message: 'use either from (inclusive) or above, not both',
      });
    if (to && below)
      ctx.addIssue({
        code: 'custom',
        path: ['below'],
        message: 'use either to (inclusive) or below, not both',
      });
    const low = from ?? above;
    const high = to ?? below;
    if (!low || !high) return;
    const order = compareBuildVersions(low, high);
    const inclusive = from !== undefined && to !== undefined && !above && !below;
    if (order > 0 || (order === 0 && !inclusive)) {
      ctx.addIssue({
        code: 'custom',
        path: [to ? 'to' : 'below'],
        message: `the range is empty: no build is ${from ? 'at or above' : 'above'} ${low} and ${to ? 'at or below' : 'below'} ${high}`,
      });
    }
  });
export type VersionRange = z.infer<typeof VersionRange>;

/**
 * Which Collectors a selection picks. Every criterion is optional; a Collector matches when it
 * meets all the criteria given. Text comparisons ignore case. A Collector whose record lacks a
 * field (or whose build is not a well-formed version) does not meet a criterion on that field.
 */
export const Selection = z.strictObject({
  /** Globs on the organization's name (the settings' `orgs`; `default` without them). */
  org: oneOrMany(glob, 'glob').optional(),
  /** Collector ids. */
  ids: oneOrMany(collectorId, 'Collector id').optional(),
  /** Globs on the Collector's name (`*`, `?`, `[abc]`, `{a,b}`; `*` also crosses `/`; compile-glob.ts). */
  name: oneOrMany(glob, 'glob').optional(),
  /** Globs on the Collector's host name. */
  hostName: oneOrMany(glob, 'glob').optional(),
  /** Exact operating system names, e.g. `Linux`, `Windows Server 2019`, `Mac OS X`. */
  osName: oneOrMany(text, 'name').optional(),
  /** Exact architectures, e.g. `amd64`, `x86_64`, `aarch64`. */
  osArch: oneOrMany(text, 'architecture').optional(),
  /** Exact time zones as the service reports them, e.g. `UTC`, `Europe/Berlin`. */
  timeZone: oneOrMany(text, 'time zone').optional(),
  /** Build ranges; the Collector's build must lie in one of them. */
  versions: oneOrMany(VersionRange, 'range').optional(),
  /** Only ephemeral Collectors (true) or only non-ephemeral ones (false). */
  ephemeral: z.boolean({ error: 'expected true or false' }).optional(),
});
export type Selection = z.infer<typeof Selection>;

/** True when a selection names no criterion at all (it matches every Collector). */
export function isEmptySelection(selection: Selection): boolean {
  return Object.values(selection).every((value) => value === undefined);
}
