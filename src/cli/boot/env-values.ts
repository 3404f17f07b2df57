/**
 * A setting read from the environment (the settings' precedence: defaults < file < environment <
 * flags): a number that passes its check, or a boolean (`1`, `true`, `yes`, `on` and their
 * opposites). An unreadable value is an issue naming the variable (`environment`), never a guess.
 */
import type { SourceIssue } from '../../lib/errors.js';

export function envNumber(
  env: NodeJS.ProcessEnv,
  name: string,
  issues: SourceIssue[],
  check: (n: number) => boolean,
): number | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isFinite(n) || !check(n)) {
    issues.push({ file: 'environment', field: name, reason: `invalid value '${raw}'` });
    return undefined;
  }
  return n;
}

export function envBoolean(env: NodeJS.ProcessEnv, name: string, issues: SourceIssue[]): boolean | undefined {
  const raw = env[name]?.trim().toLowerCase();
  if (raw === undefined || raw === '') return undefined;
  if (['1', 'true', 'yes', 'on'].includes(raw)) return true;
  if (['0', 'false', 'no', 'off'].includes(raw)) return false;
  issues.push({ file: 'environment', field: name, reason: `expected true or false, got '${env[name]}'` });
  return undefined;
}
