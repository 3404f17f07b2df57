/**
 * One measurement of one analysis query: GET {prometheus}/api/v1/query?query=…&time=…, judged
 * against the query's condition. The whole HTTP policy of analysis is here: a hard time limit
 * (`timeout`, from connecting to the last byte), no redirect followed (a 3xx is inconclusive:
 * configure the final URL), at most ANSWER_SIZE_CAP bytes of the answer read, the answer parsed
 * with its zod schema. Never throws: anything that is not a judged value (no answer, an error
 * status, a body that is not a query result, a missing header value) is an `inconclusive`
 * measurement whose detail says what happened in one sentence. Nothing here logs, and no detail
 * holds a header's value: a Prometheus (or a proxy) that echoes one in its answer is scrubbed
 * before anything of the answer is cut or kept (src/lib/scrub-secrets.ts).
 */
import { readFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';
import { request } from 'undici';
import { describeIssues } from '../api/schema.js';
import { formatDuration } from '../lib/duration.js';
import { createScrubber, NO_SECRETS } from '../lib/scrub-secrets.js';
import type { AnalysisQuery } from '../policy/analysis.js';
import { judgeResult } from './judge-result.js';
import { clip } from './record-measurement.js';
import { type QueryVars, renderQuery } from './render-query.js';
import { resolveHeaders } from './resolve-headers.js';
import { type Measurement, PromQueryAnswer } from './schema.js';

/** Bytes of an answer read at most; a larger answer is inconclusive. */
export const ANSWER_SIZE_CAP = 1024 * 1024;

export interface MeasureOptions {
  /** Clock ms stamped on the measurement (the rollout's clock; scaled in a rehearsal). */
  now: number;
  /**
   * Unix ms at which Prometheus evaluates the query (`time=`). Default: the wall clock, since
   * Prometheus's samples carry real time even when the rollout's clock is scaled.
   */
  evaluateAt?: number;
  /** undici dispatcher (connection pool, proxy); default undici's global one. */
  dispatcher?: Dispatcher;
  /** Stops the measurement (the process stops); it ends inconclusive. */
  signal?: AbortSignal;
  /** Where `valueEnv` headers are read. Default process.env. */
  env?: NodeJS.ProcessEnv;
  /** Reads `valueFile` headers. Default: from disk. */
  readFile?: (path: string) => string;
  /** Values of the query's placeholders. */
  vars?: QueryVars;
}

type Body = AsyncIterable<Buffer> & { destroy(): unknown; on(event: 'error', listener: () => void): unknown };

/** Closes an answer's body unread; undici reports that as an error, which is expected here. */
function discard(body: Body): void {
  body.on('error', () => {});
  body.destroy();
}

/** The body as text, or undefined when it is larger than the cap (reading stops there). */
async function readCapped(body: Body, cap: number): Promise<string | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      size += chunk.length;
      if (size > cap) return undefined;
      chunks.push(chunk);
    }
  } finally {
    discard(body);
  }
  return Buffer.concat(chunks).toString('utf8');
}

/** A short, single-line excerpt of an error body (scrubbed before it is cut). */
function excerpt(text: string): string {
  return text.replace(/\s+/g, ' ').trim().slice(0, 120);
}

export async function measure(query: AnalysisQuery, options: MeasureOptions): Promise<Measurement> {
  const at = options.now;
  // The headers' values, once read: nothing of an answer is kept with one of them in it.
  let secrets = NO_SECRETS;
  const inconclusive = (detail: string): Measurement => ({
    at,
    outcome: 'inconclusive',
    detail: clip(secrets.scrub(detail)),
  });
  const where = `Prometheus at ${query.prometheus}`;

  const rendered = renderQuery(query.query, options.vars);
  if (!rendered.ok) return inconclusive(rendered.problem);
  const headers = resolveHeaders(query.headers, {
    env: options.env ?? process.env,
    readFile: options.readFile ?? ((path: string) => readFileSync(path, 'utf8')),
  });
  if (!headers.ok) return inconclusive(headers.problem);
  secrets = createScrubber(Object.values(headers.headers));

  const time = ((options.evaluateAt ?? Date.now()) / 1000).toFixed(3);
  const url = `${query.prometheus}/api/v1/query?${new URLSearchParams({ query: rendered.query, time })}`;
  const timeout = AbortSignal.timeout(query.timeout);
  const signal = options.signal ? AbortSignal.any([options.signal, timeout]) : timeout;
  try {
    const res = await request(url, {
      method: 'GET',
      headers: { accept: 'application/json', 'user-agent': 'fleet-upgrade (analysis)', ...headers.headers },
      signal,
      headersTimeout: query.timeout,
      bodyTimeout: query.timeout,
      ...(options.dispatcher ? { dispatcher: options.dispatcher } : {}),
    });
    const status = res.statusCode;
    if (status >= 300 && status < 400) {
      discard(res.body);
      return inconclusive(`${where} answered ${status} (redirects are not followed: give the final URL)`);
    }
    const length = Number(res.headers['content-length']);
    if (length > ANSWER_SIZE_CAP) {
      discard(res.body);
      return inconclusive(`${where} answered with more than ${ANSWER_SIZE_CAP} bytes`);
    }
    const raw = await readCapped(res.body, ANSWER_SIZE_CAP);
    if (raw === undefined) return inconclusive(`${where} answered with more than ${ANSWER_SIZE_CAP} bytes`);
    const text = secrets.scrub(raw);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      const body = excerpt(text);
      return inconclusive(
        `${where} answered ${status} with a body that is not JSON${body ? `: ${body}` : ''}`,
      );
    }
    const parsed = PromQueryAnswer.safeParse(json);
    if (!parsed.success) {
      if (status < 200 || status >= 300) return inconclusive(`${where} answered ${status}`);
      return inconclusive(
        `${where} answered with a body that is not a query result: ${describeIssues(parsed.error)}`,
      );
    }
    const answer = parsed.data;
    if (answer.status === 'error') {
      // Parsed strings are unescaped: scrubbed again, whole, before the detail is cut.
      const what = secrets.scrub([answer.errorType, answer.error].filter(Boolean).join(': '));
      return inconclusive(`${where} answered ${status}${what ? `: ${what}` : ''}`);
    }
    if (status < 200 || status >= 300) return inconclusive(`${where} answered ${status}`);
    const judged = judgeResult(answer.data, query.condition);
    return {
      at,
      outcome: judged.outcome,
      ...(judged.value === undefined ? {} : { value: judged.value }),
      detail: clip(secrets.scrub(judged.detail)),
    };
  } catch (err) {
    if (options.signal?.aborted) return inconclusive('the measurement was stopped');
    if (timeout.aborted)
      return inconclusive(`no answer from ${where} within ${formatDuration(query.timeout)}`);
    const code = (err as { code?: unknown }).code;
    const message = err instanceof Error ? err.message : String(err);
    const why = `${message}${typeof code === 'string' && !message.includes(code) ? ` (${code})` : ''}`;
    return inconclusive(`${where} did not answer: ${why.split(url).join('[query URL]')}`);
  }
}
