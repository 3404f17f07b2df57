/**
 * What `GET /fleet/history` answers (compliance-history.ts keeps the samples, http/get-fleet.ts
 * serves them): each organization × policy's compliance over time. Types only, with no import,
 * so that the web console (src/console, built for the browser) reads the very shape the server
 * writes.
 */

/** One sample: the bucket's start (clock ms), the build judged against, the counts. */
export interface CompliancePoint {
  at: number;
  target: string | null;
  compliant: number;
  selected: number;
  behind: number;
  unknown: number;
}

/** One organization × policy over time, oldest first. */
export interface ComplianceSeries {
  org: string;
  policy: string;
  points: CompliancePoint[];
}

/** The body of `GET /fleet/history`: the series, and the history's bounds (clock ms). */
export interface FleetHistoryAnswer {
  now: number;
  bucketMs: number;
  maxAgeMs: number;
  maxSamples: number;
  series: ComplianceSeries[];
}
