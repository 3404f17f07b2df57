/**
 * Analysis gates against Debian's real `prometheus`: a tiny /metrics endpoint on loopback (a
 * prom-client registry of this test, with a gauge and the daemon's results counter that the test
 * changes), scraped every second. Whole analyses are driven through advanceAnalysis on a clock of
 * their own (the schedule is unit-tested; here every measurement is a real query):
 * - a query on the gauge passes while its condition holds and fails once the gauge crosses it;
 * - the worked example of docs/policy.md ("Analysis gates"), read from that page itself, passes at a
 *   2 % failure share and fails at 11 %;
 * - a metric that does not exist (no data) is inconclusive, and so is an unreachable Prometheus.
 * Loopback only; every wait is bounded; everything started here is stopped in afterAll.
 */
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join, resolve } from 'node:path';
import { Counter, Gauge, Registry } from 'prom-client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { advanceAnalysis } from '../../../src/analysis/advance-analysis.js';
import type { MeasureOptions } from '../../../src/analysis/measure.js';
import { startAnalysis } from '../../../src/analysis/record-measurement.js';
import type { Measurement } from '../../../src/analysis/schema.js';
import type { AnalysisVerdict } from '../../../src/analysis/verdict.js';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import { AnalysisGate, AnalysisQuery, type AnalysisQueryInput } from '../../../src/policy/analysis.js';
import {
  ensurePrometheusTools,
  promQuery,
  type RunningPrometheus,
  startPrometheus,
} from '../../support/prometheus.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const ROLLOUT = 'linux-fleet@19.470-4';
const T0 = 1_700_000_000_000;
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder of an analysis query, as written in YAML
const ROLLOUT_PLACEHOLDER = '${rollout}';

const registry = new Registry();
const ratio = new Gauge({
  name: 'analysis_test_error_ratio',
  help: 'A ratio the test changes',
  labelNames: ['rollout'],
  registers: [registry],
});
const results = new Counter({
  name: 'fleet_upgrade_results_total',
  help: 'Outcomes, as the daemon counts them',
  labelNames: ['rollout', 'outcome'],
  registers: [registry],
});

let server: Server | undefined;
let prometheus: RunningPrometheus | undefined;

beforeAll(async () => {
  const tools = await ensurePrometheusTools();
  ratio.set({ rollout: ROLLOUT }, 0.01);
  ratio.set({ rollout: 'other@1' }, 0.02);
  // Every series exists from the first scrape on, at 0, as increase() needs a sample before the change.
  for (const outcome of ['succeeded', 'failed', 'timed_out', 'skipped'])
    results.inc({ rollout: ROLLOUT, outcome }, 0);
  server = createServer((req, res) => {
    if (req.url !== '/metrics') {
      res.writeHead(404).end();
      return;
    }
    registry.metrics().then(
      (text) => res.writeHead(200, { 'content-type': registry.contentType }).end(text),
      () => res.writeHead(500).end(),
    );
  });
  await new Promise<void>((done) => server?.listen(0, '127.0.0.1', done));
  const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  prometheus = await startPrometheus(
    tools.prometheus,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s' },
      scrape_configs: [{ job_name: 'analysis-test', static_configs: [{ targets: [target] }] }],
    }),
  );
}, 120_000);

afterAll(async () => {
  await prometheus?.stop();
  await new Promise<void>((done) => (server ? server.close(() => done()) : done()));
});

function promUrl(): string {
  if (!prometheus) throw new Error('prometheus did not start');
  return prometheus.url;
}

/** Polls `expr` until its single value satisfies `ok`, or throws after `limitMs` (with what was seen). */
async function waitForValue(expr: string, ok: (value: number) => boolean, limitMs = 20_000): Promise<number> {
  const deadline = Date.now() + limitMs;
  let seen = 'nothing yet';
  for (let i = 0; i < 1000 && Date.now() < deadline; i++) {
    const answer = await promQuery(promUrl(), expr).catch((err: Error) => ({
      ok: false as const,
      error: err.message,
    }));
    if (answer.ok && answer.series.length === 1) {
      const value = Number(answer.series[0]?.value[1]);
      if (ok(value)) return value;
      seen = String(value);
    } else seen = answer.ok ? `${answer.series.length} series` : answer.error;
    await new Promise((r) => setTimeout(r, 250));
  }
  throw new Error(
    `${expr}: not as wanted within ${limitMs} ms (last: ${seen})\n${prometheus?.output().slice(-2000)}`,
  );
}

interface Finished {
  verdict: AnalysisVerdict;
  measurements: Measurement[];
}

/** Runs an analysis to its verdict on a clock of its own: each step at the time nextDue names. */
async function analyse(
  queries: AnalysisQuery[],
  options: Omit<MeasureOptions, 'now'> = {},
): Promise<Finished> {
  let run = startAnalysis(T0);
  let now = T0;
  const measurements: Measurement[] = [];
  for (let step = 0; step < 100; step++) {
    const next = await advanceAnalysis(run, queries, { ...options, now });
    run = next.run;
    measurements.push(...next.measured.map((m) => m.measurement));
    if (next.nextAt === undefined) return { verdict: next.verdict, measurements };
    now = Math.max(now, next.nextAt);
  }
  throw new Error('the analysis did not reach a verdict in 100 steps');
}

function query(input: Omit<AnalysisQueryInput, 'prometheus'>, prometheusUrl = promUrl()): AnalysisQuery {
  return AnalysisQuery.parse({ prometheus: prometheusUrl, interval: '1m', ...input });
}

/** The worked example's gate, as docs/policy.md writes it. */
async function readmeGate(): Promise<AnalysisQuery[]> {
  const doc = await readFile(join(ROOT, 'docs/policy.md'), 'utf8');
  const start = doc.indexOf('\n## Analysis gates\n');
  if (start < 0) throw new Error('docs/policy.md has no section "## Analysis gates"');
  const block = /```yaml\n([\s\S]*?)```/.exec(doc.slice(start))?.[1];
  if (!block) throw new Error('docs/policy.md has no yaml example under "## Analysis gates"');
  const policy = parse(block) as { waves: { analysis?: unknown }[] };
  return AnalysisGate.parse(policy.waves[0]?.analysis);
}

describe('analysis gates against a real Prometheus', () => {
  it('passes while the gauge meets the condition, and fails once it crosses it', async () => {
    const expr = `max by (rollout) (analysis_test_error_ratio{rollout="${ROLLOUT}"})`;
    await waitForValue(expr, (v) => v === 0.01);
    const gate = [query({ name: 'ratio', query: expr, condition: { below: 0.05 }, count: 3 })];
    const passed = await analyse(gate);
    expect(passed.verdict.status).toBe('passed');
    expect(passed.measurements.map((m) => [m.outcome, m.value])).toEqual([
      ['pass', 0.01],
      ['pass', 0.01],
      ['pass', 0.01],
    ]);
    expect(passed.measurements[0]?.detail).toBe(`0.01 on {rollout="${ROLLOUT}"} is below 0.05`);

    ratio.set({ rollout: ROLLOUT }, 0.12);
    await waitForValue(expr, (v) => v === 0.12);
    const failed = await analyse(gate);
    expect(failed.verdict.status).toBe('failed');
    expect(failed.verdict.reason).toBe(
      `ratio: 1 of 1 measurement failed (failureLimit 0); last: 0.12 on {rollout="${ROLLOUT}"} is not below 0.05`,
    );

    // Every series is judged: the other rollout's 0.02 passes, this one's 0.12 fails the measurement.
    const both = [
      query({ query: 'max by (rollout) (analysis_test_error_ratio)', condition: { below: 0.05 } }),
    ];
    const judged = await analyse(both);
    expect(judged.measurements[0]?.detail).toBe(
      `0.12 on {rollout="${ROLLOUT}"} is not below 0.05 (1 of 2 series)`,
    );
    ratio.set({ rollout: ROLLOUT }, 0.01);
  });

  it('judges the worked example of docs/policy.md on fleet_upgrade_results_total: 2 % passes, 11 % fails', async () => {
    const [example] = await readmeGate();
    if (!example) throw new Error('no query in the example');
    const gate = [{ ...example, prometheus: promUrl() }];
    const options = { vars: { rollout: ROLLOUT }, env: { PROMETHEUS_AUTHORIZATION: 'Bearer test' } };
    const share = gate[0]?.query.replaceAll(ROLLOUT_PLACEHOLDER, ROLLOUT) ?? '';

    results.inc({ rollout: ROLLOUT, outcome: 'succeeded' }, 98);
    results.inc({ rollout: ROLLOUT, outcome: 'failed' }, 2);
    results.inc({ rollout: ROLLOUT, outcome: 'skipped' }, 50);
    await waitForValue(share, (v) => Math.abs(v - 0.02) < 1e-9);
    const passed = await analyse(gate, options);
    expect(passed.verdict).toMatchObject({
      status: 'passed',
      reason: 'every query held: failure-share 5 of 5 passed',
    });
    expect(
      passed.measurements.every((m) => m.outcome === 'pass' && Math.abs((m.value ?? 1) - 0.02) < 1e-9),
    ).toBe(true);

    results.inc({ rollout: ROLLOUT, outcome: 'timed_out' }, 10);
    await waitForValue(share, (v) => Math.abs(v - 12 / 110) < 1e-9);
    const failed = await analyse(gate, options);
    expect(failed.verdict.status).toBe('failed');
    expect(failed.verdict.reason).toMatch(
      /^failure-share: 1 of 1 measurement failed .*; last: 0\.109091 is not below 0\.05$/,
    );
  });

  it('is inconclusive, never passed, on a metric that does not exist', async () => {
    const gate = [query({ name: 'missing', query: 'analysis_test_no_such_metric', condition: { below: 1 } })];
    const { verdict, measurements } = await analyse(gate);
    expect(verdict.status).toBe('inconclusive');
    expect(measurements.map((m) => m.outcome)).toEqual(['inconclusive', 'inconclusive']);
    expect(verdict.reason).toBe(
      'missing: 2 of 2 measurements inconclusive (inconclusiveLimit 1); last: no data: the query returned no series',
    );
  });

  it("is inconclusive on Prometheus's own error answer", async () => {
    const gate = [query({ query: 'sum(', condition: { below: 1 }, inconclusiveLimit: 0 })];
    const { verdict } = await analyse(gate);
    expect(verdict.status).toBe('inconclusive');
    expect(verdict.reason).toMatch(
      /last: Prometheus at http:\/\/127\.0\.0\.1:\d+ answered 400: bad_data: .*parse error/,
    );
  });

  it('is inconclusive when Prometheus cannot be reached, and says so', async () => {
    const port = await freeLoopbackPort();
    const gate = [query({ name: 'down', query: 'up', condition: { above: 0 } }, `http://127.0.0.1:${port}`)];
    const { verdict } = await analyse(gate);
    expect(verdict.status).toBe('inconclusive');
    expect(verdict.reason).toMatch(
      new RegExp(
        `^down: 2 of 2 measurements inconclusive \\(inconclusiveLimit 1\\); last: Prometheus at http://127\\.0\\.0\\.1:${port} did not answer: .*ECONNREFUSED`,
      ),
    );
  });
});
