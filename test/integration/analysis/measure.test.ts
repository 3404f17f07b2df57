/**
 * measure() over real HTTP against loopback stubs of Prometheus's query endpoint: the request it
 * sends (path, query, time, headers), and every way an answer can fail to be a judged value
 * (error status, HTML, off-schema body, redirect, oversized body, silence, no listener, a missing
 * header value, a stop) ending inconclusive with one sentence that says so.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { advanceAnalysis } from '../../../src/analysis/advance-analysis.js';
import { ANSWER_SIZE_CAP, measure } from '../../../src/analysis/measure.js';
import { startAnalysis } from '../../../src/analysis/record-measurement.js';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import { AnalysisQuery, type AnalysisQueryInput } from '../../../src/policy/analysis.js';
import { reply, startStubServer, stopStubServers } from '../../support/stub-server.js';

afterEach(() => stopStubServers());

const NOW = 1_700_000_000_000;
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder of an analysis query, as written in YAML
const ROLLOUT = '${rollout}';

const vector = (value: string, metric: Record<string, string> = { rollout: 'a@1' }) => ({
  status: 'success',
  data: { resultType: 'vector', result: [{ metric, value: [NOW / 1000, value] }] },
});

function spec(prometheus: string, overrides: Partial<AnalysisQueryInput> = {}) {
  return AnalysisQuery.parse({ prometheus, query: 'error_share', condition: { below: 0.05 }, ...overrides });
}

describe('measure', () => {
  it('sends one GET to /api/v1/query with the query, the time and the headers, and judges the answer', async () => {
    const stub = await startStubServer((_req, res) => reply(res, 200, vector('0.01')));
    const q = spec(`${stub.url}/prom/`, {
      query: `sum(x{rollout="${ROLLOUT}"})`,
      headers: [
        { name: 'Authorization', valueEnv: 'PROM_AUTH' },
        { name: 'X-Scope-OrgID', valueFile: '/run/tenant' },
      ],
    });
    const measurement = await measure(q, {
      now: 42,
      evaluateAt: NOW,
      env: { PROM_AUTH: 'Bearer t0ken' },
      readFile: () => 'team-a\n',
      vars: { rollout: 'linux@19.470-4' },
    });
    expect(measurement).toEqual({
      at: 42,
      outcome: 'pass',
      value: 0.01,
      detail: '0.01 on {rollout="a@1"} is below 0.05',
    });
    expect(stub.requests).toHaveLength(1);
    const [seen] = stub.requests;
    const url = new URL(seen?.url ?? '', stub.url);
    expect(seen?.method).toBe('GET');
    expect(url.pathname).toBe('/prom/api/v1/query');
    expect(url.searchParams.get('query')).toBe('sum(x{rollout="linux@19.470-4"})');
    expect(url.searchParams.get('time')).toBe('1700000000.000');
    expect(seen?.headers.authorization).toBe('Bearer t0ken');
    expect(seen?.headers['x-scope-orgid']).toBe('team-a');
  });

  it('fails a value that does not meet the condition', async () => {
    const stub = await startStubServer((_req, res) => reply(res, 200, vector('0.12')));
    expect(await measure(spec(stub.url), { now: 1 })).toEqual({
      at: 1,
      outcome: 'fail',
      value: 0.12,
      detail: '0.12 on {rollout="a@1"} is not below 0.05',
    });
  });

  it.each([
    [
      "Prometheus's error answer",
      (res: Parameters<typeof reply>[0]) =>
        reply(res, 400, { status: 'error', errorType: 'bad_data', error: 'parse error: unexpected <EOF>' }),
      /answered 400: bad_data: parse error: unexpected <EOF>$/,
    ],
    [
      'an HTML error page',
      (res: Parameters<typeof reply>[0]) => reply(res, 502, '<html><body>Bad   Gateway</body></html>'),
      /answered 502 with a body that is not JSON: <html><body>Bad Gateway<\/body><\/html>$/,
    ],
    [
      'a body off the schema',
      (res: Parameters<typeof reply>[0]) =>
        reply(res, 200, { status: 'success', data: { resultType: 'vector' } }),
      /answered with a body that is not a query result: data\.result: /,
    ],
    [
      'a JSON body of another service with an error status',
      (res: Parameters<typeof reply>[0]) => reply(res, 503, { message: 'down' }),
      /answered 503$/,
    ],
    [
      'a redirect (not followed)',
      (res: Parameters<typeof reply>[0]) => reply(res, 302, '', { location: 'http://127.0.0.1:1/elsewhere' }),
      /answered 302 \(redirects are not followed: give the final URL\)$/,
    ],
    [
      'an empty vector',
      (res: Parameters<typeof reply>[0]) =>
        reply(res, 200, { status: 'success', data: { resultType: 'vector', result: [] } }),
      /^no data: the query returned no series$/,
    ],
    [
      'NaN',
      (res: Parameters<typeof reply>[0]) => reply(res, 200, vector('NaN')),
      /^NaN on \{rollout="a@1"\} cannot be judged$/,
    ],
  ])('is inconclusive on %s', async (_what, answer, detail) => {
    const stub = await startStubServer((_req, res) => answer(res));
    const measurement = await measure(spec(stub.url), { now: 7 });
    expect(measurement.outcome).toBe('inconclusive');
    expect(measurement.detail).toMatch(detail);
    expect(measurement).not.toHaveProperty('value');
    expect(stub.requests).toHaveLength(1);
  });

  it('is inconclusive on an answer larger than the cap, declared or streamed', async () => {
    const big = JSON.stringify(vector('0.01')).padEnd(ANSWER_SIZE_CAP + 10, ' ');
    const declared = await startStubServer((_req, res) => reply(res, 200, big));
    expect((await measure(spec(declared.url), { now: 1 })).detail).toMatch(
      /answered with more than 1048576 bytes/,
    );
    const streamed = await startStubServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(big);
      res.end();
    });
    expect((await measure(spec(streamed.url), { now: 1 })).detail).toMatch(/more than 1048576 bytes/);
  });

  it('is inconclusive when no answer comes within the timeout', async () => {
    const stub = await startStubServer(() => new Promise<void>(() => {}));
    const started = Date.now();
    const measurement = await measure(spec(stub.url, { timeout: '300ms' }), { now: 1 });
    expect(Date.now() - started).toBeLessThan(5_000);
    expect(measurement).toEqual({
      at: 1,
      outcome: 'inconclusive',
      detail: `no answer from Prometheus at ${stub.url} within 300ms`,
    });
  });

  it('is inconclusive, with the reason, when nothing listens', async () => {
    const port = await freeLoopbackPort();
    const measurement = await measure(spec(`http://127.0.0.1:${port}`), { now: 1 });
    expect(measurement.outcome).toBe('inconclusive');
    expect(measurement.detail).toMatch(
      new RegExp(`^Prometheus at http://127\\.0\\.0\\.1:${port} did not answer: .*ECONNREFUSED`),
    );
  });

  it('is inconclusive without a request when a header value or a placeholder value is missing', async () => {
    const stub = await startStubServer((_req, res) => reply(res, 200, vector('0.01')));
    const withHeader = spec(stub.url, { headers: [{ name: 'Authorization', valueEnv: 'PROM_AUTH' }] });
    expect((await measure(withHeader, { now: 1, env: {} })).detail).toBe(
      'header Authorization: the environment variable PROM_AUTH is not set or empty',
    );
    const withVar = spec(stub.url, { query: `x{rollout="${ROLLOUT}"}` });
    expect((await measure(withVar, { now: 1 })).detail).toBe(
      `the query uses ${ROLLOUT}, which has no value here`,
    );
    expect(stub.requests).toHaveLength(0);
  });

  it('is inconclusive when stopped', async () => {
    const stub = await startStubServer(() => new Promise<void>(() => {}));
    const stop = new AbortController();
    const pending = measure(spec(stub.url), { now: 1, signal: stop.signal });
    setTimeout(() => stop.abort(), 50);
    expect(await pending).toEqual({ at: 1, outcome: 'inconclusive', detail: 'the measurement was stopped' });
  });
});

describe('advanceAnalysis', () => {
  it('measures the due queries, records them and says when to come back', async () => {
    let value = '0.01';
    const stub = await startStubServer((_req, res) => reply(res, 200, vector(value)));
    const queries = [spec(stub.url, { name: 'share', count: 3, interval: '1m' })];
    let run = startAnalysis(NOW);
    const first = await advanceAnalysis(run, queries, { now: NOW });
    expect(first.measured.map((m) => m.measurement.outcome)).toEqual(['pass']);
    expect(first.nextAt).toBe(NOW + 60_000);
    expect(first.verdict.status).toBe('running');
    run = first.run;
    const early = await advanceAnalysis(run, queries, { now: NOW + 30_000 });
    expect(early.measured).toEqual([]);
    expect(stub.requests).toHaveLength(1);
    value = '0.5';
    const second = await advanceAnalysis(run, queries, { now: NOW + 60_000 });
    expect(second.verdict).toMatchObject({
      status: 'failed',
      reason:
        'share: 1 of 2 measurements failed (failureLimit 0); last: 0.5 on {rollout="a@1"} is not below 0.05',
    });
    expect(second.nextAt).toBeUndefined();
  });
});
