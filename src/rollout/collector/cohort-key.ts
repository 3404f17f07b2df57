/**
 * The key of a Collector's cohort: the values of the policy's `cohorts.by` dimensions, readable
 * and stable, e.g. `osName=Windows Server 2019,osArch=amd64`. Dimensions always appear in the
 * order of COHORT_DIMENSIONS (osName, osArch, fromBuild) whatever the order of `by`, so that
 * reordering `by` keeps the keys. A missing or empty value is `unknown` (so a Collector that
 * reports the name "unknown" shares that cohort). `%`, `,` and `=` in a value are written as
 * `%25`, `%2C` and `%3D`, so that parseCohortKey gives back exactly the values.
 */
import { COHORT_DIMENSIONS, type CohortDimension } from '../../policy/cohorts.js';

/** The fields of a Collector's record that cohorts read (`from`: the build it had before the rollout). */
export interface CohortSource {
  osName?: string | undefined;
  osArch?: string | undefined;
  from?: string | undefined;
}

export type CohortValues = Partial<Record<CohortDimension, string>>;

export const UNKNOWN_COHORT_VALUE = 'unknown';

const escapeValue = (value: string) =>
  value.replace(/[%,=]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

function dimensionValue(record: CohortSource, dimension: CohortDimension): string {
  const raw = dimension === 'fromBuild' ? record.from : record[dimension];
  const value = raw?.trim();
  return value ? value : UNKNOWN_COHORT_VALUE;
}

/** The cohort key of `record` on the dimensions `by`. */
export function cohortKey(record: CohortSource, by: readonly CohortDimension[]): string {
  return COHORT_DIMENSIONS.filter((d) => by.includes(d))
    .map((d) => `${d}=${escapeValue(dimensionValue(record, d))}`)
    .join(',');
}

/** The values named by a key made by cohortKey, or undefined when `key` is not such a key. */
export function parseCohortKey(key: string): CohortValues | undefined {
  if (key === '') return undefined;
  const out: CohortValues = {};
  for (const part of key.split(',')) {
    const eq = part.indexOf('=');
    const name = part.slice(0, eq);
    if (eq < 0 || !(COHORT_DIMENSIONS as readonly string[]).includes(name)) return undefined;
    const dimension = name as CohortDimension;
    if (out[dimension] !== undefined) return undefined;
    const raw = part.slice(eq + 1);
    if (raw.includes('=') || /%(?!25|2C|3D)/i.test(raw)) return undefined;
    out[dimension] = raw.replace(/%(25|2C|3D)/gi, (_, hex: string) =>
      String.fromCharCode(Number.parseInt(hex, 16)),
    );
  }
  return out;
}
