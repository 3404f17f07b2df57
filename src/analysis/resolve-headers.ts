/**
 * The request headers of an analysis query, their values read from the environment or from files
 * at each measurement (so a rotated token is picked up). A value is never logged or put in a
 * detail; a problem names the header and where its value was looked for.
 */
import { readFileSync } from 'node:fs';
import type { AnalysisHeader } from '../policy/analysis.js';

export interface HeaderSources {
  env: NodeJS.ProcessEnv;
  /** Default: read from disk (UTF-8). */
  readFile?: (path: string) => string;
}

export type ResolvedHeaders = { ok: true; headers: Record<string, string> } | { ok: false; problem: string };

const HEADER_VALUE_MAX_LENGTH = 8192;
/** Printable ASCII and tabs only: a line break would split the request. */
const HEADER_VALUE = /^[\t\x20-\x7e]+$/;

export function resolveHeaders(list: readonly AnalysisHeader[], sources: HeaderSources): ResolvedHeaders {
  const readFile = sources.readFile ?? ((path: string) => readFileSync(path, 'utf8'));
  const headers: Record<string, string> = {};
  for (const h of list) {
    let value: string | undefined;
    let from: string;
    if (h.valueEnv !== undefined) {
      from = `the environment variable ${h.valueEnv}`;
      value = sources.env[h.valueEnv]?.trim();
    } else {
      from = `the file ${h.valueFile}`;
      try {
        value = readFile(h.valueFile ?? '').trim();
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
        return { ok: false, problem: `header ${h.name}: cannot read ${h.valueFile} (${code})` };
      }
    }
    if (!value)
      return {
        ok: false,
        problem: `header ${h.name}: ${from} ${h.valueEnv !== undefined ? 'is not set or empty' : 'is empty'}`,
      };
    if (value.length > HEADER_VALUE_MAX_LENGTH)
      return {
        ok: false,
        problem: `header ${h.name}: ${from} holds more than ${HEADER_VALUE_MAX_LENGTH} characters`,
      };
    if (!HEADER_VALUE.test(value))
      return { ok: false, problem: `header ${h.name}: ${from} holds characters a header cannot carry` };
    headers[h.name] = value;
  }
  return { ok: true, headers };
}
