/**
 * The one codec between a rollout's Redis hash and its typed record (rollout-record.ts): the field
 * table says how each field is kept (text, a number, JSON), a typed patch (`RolloutPatch`: a
 * field's new value, or `null` to clear it) is encoded for the write path, and a hash is decoded.
 */
import { AnalysisRun } from '../../analysis/index.js';
import type { RolloutRecord, RolloutSettings, WaveProgress } from './rollout-record.js';

/** How each field is kept in the hash: text, a number, or JSON. */
const FIELDS = {
  id: 'text',
  policy: 'text',
  target: 'text',
  build: 'text',
  builds: 'json',
  orgs: 'json',
  phase: 'text',
  startedAt: 'number',
  updatedAt: 'number',
  convergedAt: 'number',
  maxInFlight: 'number',
  settings: 'json',
  statusReads: 'number',
  createRequests: 'number',
  scans: 'number',
  lastScanAt: 'number',
  haltReason: 'text',
  pauseReason: 'text',
  gateBaseline: 'json',
  firstPollMs: 'number',
  pausedBy: 'text',
  pausedAt: 'number',
  pausedOrgs: 'json',
  abortReason: 'text',
  releasedAt: 'number',
  policyHash: 'text',
  wave: 'json',
  canaries: 'number',
  belowMinimum: 'number',
  minimumBuild: 'text',
  knownIssueSkipped: 'number',
  knownIssueManual: 'number',
  healthUnhealthy: 'number',
  knownIssues: 'json',
  ringPausedFor: 'text',
  waveBaseline: 'json',
  expectedMs: 'number',
  holding: 'text',
  watchMs: 'number',
  rollbacks: 'json',
  rollbackOf: 'text',
  unmatched: 'json',
  quarantined: 'json',
  cohortsReleased: 'json',
  analysisRun: 'json',
  analysisWave: 'number',
  analysisVerdict: 'text',
} as const satisfies Record<keyof RolloutRecord, 'text' | 'number' | 'json'>;

/**
 * Fields written only by their own paths: the identity (`start`), the phase (moves), the wave
 * progress (its compare-and-set), the counters (increments: the Lua of the Collector store and
 * `RolloutWrite.add`).
 */
type OwnPath =
  | 'id'
  | 'policy'
  | 'build'
  | 'startedAt'
  | 'phase'
  | 'wave'
  | 'statusReads'
  | 'createRequests'
  | 'scans'
  | 'canaries'
  | 'belowMinimum'
  | 'knownIssueSkipped'
  | 'knownIssueManual';

/** A change of a rollout's fields: a new value, or `null` to clear an optional field. */
export type RolloutPatch = {
  [K in Exclude<keyof RolloutRecord, OwnPath>]?: RolloutRecord[K] | null;
};

/** Counters of a rollout that are increased, never set. */
export type RolloutCounter = 'statusReads' | 'createRequests' | 'scans';

/** The hash fields a patch writes and removes. */
export function encodePatch(patch: RolloutPatch): { set: Record<string, string | number>; clear: string[] } {
  const set: Record<string, string | number> = {};
  const clear: string[] = [];
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    if (value === null) {
      clear.push(field);
      continue;
    }
    const kind = FIELDS[field as keyof typeof FIELDS];
    set[field] = kind === 'json' ? JSON.stringify(value) : (value as string | number);
  }
  return { set, clear };
}

/** The record with `patch` applied (as Redis holds it once the patch is written). */
export function applyPatch<R extends RolloutRecord>(record: R, patch: RolloutPatch): R {
  const next: Record<string, unknown> = { ...(record as RolloutRecord) };
  for (const [field, value] of Object.entries(patch)) {
    if (value === undefined) continue;
    next[field] = value === null ? undefined : value;
  }
  return next as R;
}

/** A stored analysis run, or undefined when there is none or it cannot be read (a new run starts). */
function readAnalysisRun(json: string | undefined): AnalysisRun | undefined {
  if (!json) return undefined;
  try {
    const parsed = AnalysisRun.safeParse(JSON.parse(json));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

/** The record a rollout's hash holds, or undefined when it holds none (no id, or never started). */
export function decodeRollout(raw: Record<string, string>): RolloutRecord | undefined {
  if (!raw.id || raw.startedAt === undefined) return undefined;
  // Every field is there, undefined when it has no value (as a record built in code would be).
  const out: Record<string, unknown> = {};
  for (const [field, kind] of Object.entries(FIELDS)) {
    const value = raw[field];
    out[field] = undefined;
    // '' is how a cleared field was written before patches removed fields.
    if (value === undefined || value === '') continue;
    if (kind === 'text') out[field] = value;
    else if (kind === 'number') out[field] = Number(value);
    else if (field === 'analysisRun') {
      const run = readAnalysisRun(value);
      if (run) out[field] = run;
    } else {
      try {
        out[field] = JSON.parse(value);
      } catch {
        // An unreadable value reads as absent; the defaults below cover the required ones.
      }
    }
  }
  const or = <T>(field: string, fallback: T): T => (out[field] === undefined ? fallback : (out[field] as T));
  return {
    ...out,
    policy: or('policy', ''),
    target: or('target', ''),
    build: or('build', ''),
    phase: or('phase', 'running'),
    updatedAt: or('updatedAt', 0),
    maxInFlight: or('maxInFlight', 0),
    settings: or('settings', {} as RolloutSettings),
    statusReads: or('statusReads', 0),
    createRequests: or('createRequests', 0),
    scans: or('scans', 0),
    canaries: or('canaries', 0),
    id: raw.id,
    startedAt: Number(raw.startedAt) || 0,
    wave: (out.wave as WaveProgress | undefined) ?? { index: 0, seq: 0 },
  } as RolloutRecord;
}
