/**
 * A query's placeholders (`${rollout}`, `${policy}`) replaced by their values, escaped as the
 * content of a PromQL string: `{rollout="${rollout}"}` selects the rollout's own series. A
 * placeholder without a value is a problem to report, never left in the query.
 */
import type { QueryPlaceholder } from '../policy/analysis.js';

export type QueryVars = Partial<Record<QueryPlaceholder, string>>;

export type RenderedQuery = { ok: true; query: string } | { ok: false; problem: string };

export function renderQuery(query: string, vars: QueryVars = {}): RenderedQuery {
  let missing: string | undefined;
  const text = query.replace(/\$\{([^}]*)\}/g, (whole, name: string) => {
    const value = vars[name as QueryPlaceholder];
    if (value === undefined) {
      missing ??= whole;
      return whole;
    }
    // PromQL strings take Go's escapes, of which JSON's are a subset.
    return JSON.stringify(value).slice(1, -1);
  });
  return missing === undefined
    ? { ok: true, query: text }
    : { ok: false, problem: `the query uses ${missing}, which has no value here` };
}
