/**
 * The settings' durations, from the environment or the settings file, within their bounds (a tick
 * of 0 would spin the CPU; an hour-long one, stall). Checked here rather than in schema.ts, so
 * that an error names the variable or the file it came from.
 */
import { formatDuration, parseDuration } from '../../lib/duration.js';
import type { SourceIssue } from '../../lib/errors.js';

/** Bounds of the settings' durations, in ms. */
export const SETTING_BOUNDS = {
  scanInterval: { min: 10_000, max: 86_400_000 },
  tick: { min: 50, max: 60_000 },
  stalledInterval: { min: 1_000, max: 3_600_000 },
  retention: { min: 3_600_000, max: 3_650 * 86_400_000 },
  'inventory.interval': { min: 60_000, max: 86_400_000 },
  'inventory.pageInterval': { min: 250, max: 600_000 },
  'audit.retention': { min: 60_000, max: 3_650 * 86_400_000 },
} as const;

/**
 * A setting's duration (`raw` as written) within its bounds, or an issue that names where it
 * came from and the bounds.
 */
export function boundedDuration(
  raw: string | undefined,
  setting: keyof typeof SETTING_BOUNDS,
  where: string,
  issues: SourceIssue[],
): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const value = parseDuration(raw);
  const { min, max } = SETTING_BOUNDS[setting];
  if (value !== undefined && Number.isFinite(value) && value >= min && value <= max) return value;
  issues.push({
    file: where,
    field: where.startsWith('FLEET_UPGRADE_') ? where : setting,
    reason:
      value === undefined
        ? `expected a duration like 90s, got '${raw}'`
        : `must be between ${formatDuration(min)} and ${formatDuration(max)}, got '${raw}'`,
  });
  return undefined;
}
