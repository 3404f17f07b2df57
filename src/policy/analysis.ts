/**
 * The `analysis` field of a policy or of a wave: Prometheus queries that must hold, after the
 * wave's bake, before the next wave starts. Each query is measured `count` times, `interval`
 * apart; a measurement passes when every series of the instant vector (or the scalar) meets the
 * `condition`, fails when one does not, and is inconclusive when there is nothing to judge (no
 * series, NaN, ±Inf, an error, no answer). src/analysis/ measures and judges; this file is the
 * schema only. Secrets never sit in the file: a header's value comes from the environment or a
 * file, and a URL with credentials is refused.
 *
 * Durations (`interval`, `timeout`) are parsed to milliseconds under the same names.
 */
import { z } from 'zod';
import { durationField, ms } from './duration-field.js';

/** Longest PromQL text accepted (it travels in a GET query string). */
export const MAX_QUERY_LENGTH = 4000;
/** Queries per gate. */
export const MAX_ANALYSIS_QUERIES = 10;
/** Measurements per query. */
export const MAX_MEASUREMENTS = 1000;
/** Placeholders a query may use; each is replaced by the value as a PromQL string's content. */
export const QUERY_PLACEHOLDERS = ['rollout', 'policy'] as const;
export type QueryPlaceholder = (typeof QUERY_PLACEHOLDERS)[number];

const PLACEHOLDER = /\$\{([^}]*)\}/g;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const HEADER_NAME = /^[A-Za-z0-9!#$%&'*+.^_`|~-]+$/;
/** Headers undici or HTTP itself owns; setting them would break the request, not authenticate it. */
const RESERVED_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'upgrade']);

function wholeNumber(min: number, max: number) {
  return z
    .number({ error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}` })
    .int('must be a whole number')
    .min(min, `must be at least ${min}`)
    .max(max, `must be at most ${max}`);
}

const threshold = z
  .number({ error: (iss) => `expected a number, got ${JSON.stringify(iss.input)}` })
  .refine(Number.isFinite, 'must be a finite number');

/** Why a Prometheus URL is refused, or undefined when it is fine. */
export function prometheusUrlProblem(text: string): string | undefined {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return 'expected an http:// or https:// URL, such as http://prometheus:9090';
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '')
    return 'expected an http:// or https:// URL, such as http://prometheus:9090';
  if (url.username !== '' || url.password !== '')
    return 'credentials in the URL are refused: send them in a header whose value comes from valueEnv or valueFile';
  if (url.search !== '' || url.hash !== '')
    return 'expected the base URL of Prometheus, without a query or fragment (/api/v1/query is appended)';
  return undefined;
}

/**
 * The success condition: bounds every value must meet. One lower bound (`above` strictly, or
 * `atLeast`) and/or one upper bound (`below` strictly, or `atMost`); `{ atLeast: 1, below: 5 }`
 * is a range.
 */
export const AnalysisCondition = z
  .strictObject({
    /** Passes when the value is strictly below this. */
    below: threshold.optional(),
    /** Passes when the value is at most this. */
    atMost: threshold.optional(),
    /** Passes when the value is strictly above this. */
    above: threshold.optional(),
    /** Passes when the value is at least this. */
    atLeast: threshold.optional(),
  })
  .superRefine((c, ctx) => {
    const upper = c.below ?? c.atMost;
    const lower = c.above ?? c.atLeast;
    if (upper === undefined && lower === undefined) {
      ctx.addIssue({ code: 'custom', message: 'give a bound: below, atMost, above or atLeast' });
      return;
    }
    if (c.below !== undefined && c.atMost !== undefined)
      ctx.addIssue({ code: 'custom', path: ['atMost'], message: 'give only one of below and atMost' });
    if (c.above !== undefined && c.atLeast !== undefined)
      ctx.addIssue({ code: 'custom', path: ['atLeast'], message: 'give only one of above and atLeast' });
    if (upper === undefined || lower === undefined) return;
    const inclusive = c.atMost !== undefined && c.atLeast !== undefined;
    if (inclusive ? lower > upper : lower >= upper)
      ctx.addIssue({ code: 'custom', message: 'no value can meet this condition: the bounds leave no room' });
  });
export type AnalysisCondition = z.infer<typeof AnalysisCondition>;

/** A request header whose value is read when measuring, from the environment or a file. */
export const AnalysisHeader = z
  .strictObject({
    /** The header's name, e.g. `Authorization` or `X-Scope-OrgID`. */
    name: z
      .string({ error: 'expected a header name' })
      .regex(HEADER_NAME, { error: 'expected a header name (letters, digits, -)' })
      .refine((n) => !RESERVED_HEADERS.has(n.toLowerCase()), { error: 'this header is set by HTTP itself' }),
    value: z
      .never({
        error:
          'an inline header value is refused (it is usually a credential): name an environment variable (valueEnv: NAME) or a file (valueFile: PATH) that holds it',
      })
      .optional(),
    /** The value from this environment variable (e.g. `Bearer …`). */
    valueEnv: z
      .string()
      .regex(ENV_NAME, { error: 'expected the name of an environment variable' })
      .optional(),
    /** The value from this file (white space around it dropped). */
    valueFile: z.string({ error: 'expected a file path' }).min(1, 'expected a file path').optional(),
  })
  .refine((h) => (h.valueEnv === undefined) !== (h.valueFile === undefined), {
    message: 'set exactly one of valueEnv and valueFile',
  });
export type AnalysisHeader = z.infer<typeof AnalysisHeader>;

export const AnalysisQuery = z
  .strictObject({
    /** Names the query in details, `status` and history. Default `query N` (its place in the list). */
    name: z
      .string({ error: 'expected text' })
      .min(1, 'must not be empty')
      .max(63, 'must be at most 63 characters')
      .optional(),
    /** Base URL of the Prometheus HTTP API (http/https, no credentials). Required. */
    prometheus: z
      .string({ error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected a URL') })
      .superRefine((text, ctx) => {
        const problem = prometheusUrlProblem(text);
        if (problem) ctx.addIssue({ code: 'custom', message: problem });
      })
      .transform((text) => text.replace(/\/+$/, '')),
    /** PromQL, evaluated as an instant query. `${rollout}` and `${policy}` are replaced. Required. */
    query: z
      .string({
        error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected PromQL text'),
      })
      .trim()
      .min(1, 'must not be empty')
      .max(MAX_QUERY_LENGTH, `must be at most ${MAX_QUERY_LENGTH} characters`)
      .superRefine((text, ctx) => {
        for (const m of text.matchAll(PLACEHOLDER)) {
          if (!(QUERY_PLACEHOLDERS as readonly string[]).includes(m[1] ?? ''))
            ctx.addIssue({
              code: 'custom',
              message: `unknown placeholder ${m[0]} (known: ${QUERY_PLACEHOLDERS.map((p) => `\${${p}}`).join(', ')})`,
            });
        }
      }),
    /** What every value must meet. Required. */
    condition: AnalysisCondition,
    /** Time between two measurements (the rollout's clock). Default 1m. */
    interval: durationField({ min: 1000, max: ms('24h') }).default(ms('1m')),
    /** Measurements in all. Default 5. */
    count: wholeNumber(1, MAX_MEASUREMENTS).default(5),
    /** Failed measurements allowed; one more fails the gate. Default 0. */
    failureLimit: wholeNumber(0, MAX_MEASUREMENTS).default(0),
    /** Inconclusive measurements allowed; one more makes the gate inconclusive. Default 1. */
    inconclusiveLimit: wholeNumber(0, MAX_MEASUREMENTS).default(1),
    /** One measurement's limit (real time), from connecting to the whole answer. Default 10s. */
    timeout: durationField({ min: 100, max: ms('2m') }).default(ms('10s')),
    /** Request headers (authentication, tenant), their values from the environment or files. Default none. */
    headers: z.array(AnalysisHeader).max(20, 'at most 20 headers').default([]),
  })
  .superRefine((q, ctx) => {
    // A pass must rest on at least one passing measurement.
    if (q.failureLimit + q.inconclusiveLimit >= q.count)
      ctx.addIssue({
        code: 'custom',
        path: ['count'],
        message: `must be above failureLimit + inconclusiveLimit (${q.failureLimit} + ${q.inconclusiveLimit}), so that a pass rests on at least one passing measurement${q.inconclusiveLimit > 0 ? ' (inconclusiveLimit defaults to 1: lower it or raise count)' : ''}`,
      });
    if (q.timeout > q.interval)
      ctx.addIssue({ code: 'custom', path: ['timeout'], message: 'must not be longer than interval' });
    const names = new Set<string>();
    q.headers.forEach((h, i) => {
      const key = h.name.toLowerCase();
      if (names.has(key))
        ctx.addIssue({
          code: 'custom',
          path: ['headers', i, 'name'],
          message: `header ${h.name} is given twice`,
        });
      names.add(key);
    });
  });
export type AnalysisQuery = z.infer<typeof AnalysisQuery>;
export type AnalysisQueryInput = z.input<typeof AnalysisQuery>;

/** A gate: the queries that must all hold. Names, where given, are unique. */
export const AnalysisGate = z
  .array(AnalysisQuery, { error: 'expected a list of queries' })
  .min(1, 'list at least one query (or leave analysis out)')
  .max(MAX_ANALYSIS_QUERIES, `at most ${MAX_ANALYSIS_QUERIES} queries`)
  .superRefine((list, ctx) => {
    const seen = new Set<string>();
    list.forEach((q, i) => {
      const name = analysisQueryName(q, i);
      if (seen.has(name))
        ctx.addIssue({ code: 'custom', path: [i, 'name'], message: `another query is named '${name}'` });
      seen.add(name);
    });
  });
export type AnalysisGate = z.infer<typeof AnalysisGate>;
export type AnalysisGateInput = z.input<typeof AnalysisGate>;

/** The name a query goes by: its own, or `query N` (1-based place in the gate). */
export function analysisQueryName(query: Pick<AnalysisQuery, 'name'>, index: number): string {
  return query.name ?? `query ${index + 1}`;
}
