/**
 * Analysis gates on the real path: the simulator over HTTP, the orchestrator (`run`) in this
 * process with its /metrics on a loopback port, and Debian's real `prometheus` scraping it every
 * second; the gate's queries go to that Prometheus through the product's own measurement code.
 * - a wave's gate holds the next wave while its query does not hold yet, then lets it through
 *   (history: analysis.started, then analysis.passed; the rollout converges);
 * - a policy-level gate whose query returns no series pauses the rollout (inconclusive), `status`
 *   explains it, and `promote` then `resume` (the built CLI) let it converge;
 * - a gate whose condition fails halts the rollout, and `resume` analyses again (halted again).
 * The rollout's clock runs TIME_SCALE× faster than real time; Prometheus's samples and the `time=`
 * of each measurement are real time, so every query window below is sized in real seconds.
 * Loopback only; every wait is bounded; everything started here is stopped in afterEach/afterAll.
 */
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import type { QueryVerdict } from '../../../src/analysis/index.js';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import type { RecordedEvent, RolloutStatus } from '../../../src/rollout/life/index.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import {
  ensurePrometheusTools,
  promQuery,
  type RunningPrometheus,
  startPrometheus,
} from '../../support/prometheus.js';
import { converged, exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

/** One minute of the rollout's clock is one real second: `interval: 1m` measures every second. */
const TIME_SCALE = 60;
const BUILDS = ['19.400-5', '19.450-12', '19.470-4'];
const TARGET = BUILDS[2] as string;
/** Scrape jobs of the one Prometheus, one per case, each on a port chosen before it starts. */
const CASES = ['holds', 'inconclusive', 'fails'] as const;
type Case = (typeof CASES)[number];

// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder of an analysis query, as written in YAML
const ROLLOUT_VAR = '${rollout}';
// biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder of an analysis query, as written in YAML
const POLICY_VAR = '${policy}';

let prometheus: RunningPrometheus | undefined;
const ports = {} as Record<Case, number>;
let harness: Harness | undefined;
let startedAt = 0;

/** 6 Collectors on an older build; each upgrade takes 2 simulated minutes (2 real seconds). */
function fleet(): FleetFileInput {
  return {
    builds: BUILDS,
    users: [{ accessId: 'gate', accessKey: 'gate-secret' }],
    collectors: Array.from({ length: 6 }, (_, i) => ({
      id: i + 1,
      version: '19.400-5',
      outcome: 'succeed' as const,
      upgradeSeconds: 120,
    })),
    behaviour: { incrementalAbove: 0 },
  };
}

/**
 * The orchestrator of a case, its /metrics where that case's scrape job looks. Its policies turn
 * post-upgrade verification off (`verify: false`): it would add minutes of simulated time (real
 * seconds) to each wave and is not what these tests are about.
 */
async function start(name: Case, policy: Record<string, unknown>): Promise<Harness> {
  harness = await startHarness({ timeScale: TIME_SCALE, fleet: fleet(), policy });
  await harness.startRun({ listen: { host: '127.0.0.1', port: ports[name] } });
  return harness;
}

/** Runs a command of the built CLI to its end; its exit code, output, and output on one line. */
async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string; text: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  // `status` wraps long lines to the terminal's width.
  return { code, out: child.output(), text: child.output().replace(/\s+/g, ' ') };
}

const rolloutOf = async (h: Harness): Promise<RolloutStatus> => {
  const r = (await h.status()).rollouts[0];
  if (!r) throw new Error('no rollout');
  return r;
};

const history = (h: Harness, id: string): Promise<RecordedEvent[]> => h.state.events.history(id);
const types = (events: RecordedEvent[]) => events.map((e) => e.type);

/** Polls `check` every 100 ms until it returns a value; throws `describe()` after `limitMs`. */
async function until<T>(check: () => Promise<T | undefined>, limitMs: number, describe: () => string) {
  const deadline = Date.now() + limitMs;
  while (Date.now() < deadline) {
    const value = await check();
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not within ${limitMs} ms: ${describe()}`);
}

beforeAll(async () => {
  startedAt = Date.now();
  const tools = await ensurePrometheusTools();
  for (const name of CASES) ports[name] = await freeLoopbackPort();
  prometheus = await startPrometheus(
    tools.prometheus,
    stringify({
      global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
      scrape_configs: CASES.map((name) => ({
        job_name: `analysis-${name}`,
        static_configs: [{ targets: [`127.0.0.1:${ports[name]}`] }],
      })),
    }),
  );
  // Prometheus hands its first targets to the scrape loops only after its discovery's 5-second
  // throttle: wait for the first scrape of every job (`up` is 0 while no daemon listens), so that
  // the rollouts below are scraped from their start.
  const url = prometheus.url;
  await until(
    async () => {
      const up = await promQuery(url, 'count(up{job=~"analysis-.*"})');
      return up.ok && up.series[0]?.value[1] === String(CASES.length) ? true : undefined;
    },
    30_000,
    () => `Prometheus did not scrape its targets: ${prometheus?.output().slice(-2000)}`,
  );
  // Long only when Debian's prometheus must first be installed (apt-get).
}, 720_000);

afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

afterAll(async () => {
  await prometheus?.stop();
  process.stdout.write(`analysis-gate e2e: ${((Date.now() - startedAt) / 1000).toFixed(1)} s in all\n`);
}, 30_000);

describe('analysis gates against a real Prometheus scraping the daemon', () => {
  it('holds the next wave until its query holds, then lets it through', async () => {
    const url = prometheus?.url as string;
    /*
     * "Wave 1's 3 successes have been scraped, and stayed so for the last 5 real seconds": the
     * smallest value of the rollout's success count at each second of the last 5 s (0 before the
     * series existed). The first measurement comes after the wave's last outcome and its bake
     * (2 simulated minutes = 2 real seconds) plus a scheduler tick (100 ms), so its 5 s window
     * always reaches back before that last outcome, when the count was at most 2: it fails, every
     * time. About 6 s after the last outcome (one scrape, then 5 s) every measurement passes.
     * With a measurement every real second (1m of the rollout's clock) that is 3 or 4 failed ones
     * (3 to 4 in the runs so far), so failureLimit 8 leaves 4 seconds of room for a slow machine,
     * and count 11 makes the pass rest on several passing measurements (passes never turn back
     * into failures: the count only grows).
     * `or vector(0)` keeps every measurement conclusive, so inconclusiveLimit 0 cannot trip; the
     * plain count without min_over_time could not be made deterministic: at the first
     * measurement it may be unscraped (no series: inconclusive), 2 (fail) or 3 (pass).
     * The pass also proves that `${rollout}` is replaced (another label value would stay 0) and
     * that Prometheus evaluates at the wall clock: the rollout's clock is minutes ahead of real
     * time by then, beyond Prometheus's 5-minute lookback, where the count would read 0.
     */
    const h = await start('holds', {
      name: 'gate-holds',
      maxInFlight: 3,
      poll: { initial: '30s', max: '1m' },
      verify: false,
      waves: [
        {
          size: 3,
          bake: '2m',
          analysis: [
            {
              name: 'wave-1-succeeded',
              prometheus: url,
              query: `min_over_time((sum(fleet_upgrade_results_total{rollout="${ROLLOUT_VAR}", outcome="succeeded"}) or vector(0))[5s:1s])`,
              condition: { atLeast: 3 },
              interval: '1m',
              count: 11,
              failureLimit: 8,
              inconclusiveLimit: 0,
            },
          ],
        },
        '100%',
      ],
    });
    const id = `gate-holds@${TARGET}`;
    await h.waitFor((s) => s.rollouts[0]?.wave?.waitingFor === 'analysis', 30_000);

    // While the analysis runs: wave 2's three Collectors stay queued and the service sees no
    // fourth task. Watched until the next wave opens.
    const snapshots: RolloutStatus[] = [];
    let statusOut = '';
    const opened = await until(
      async () => {
        const r = await rolloutOf(h);
        if (r.wave.waitingFor === 'analysis') {
          snapshots.push(r);
          expect(r.phase).toBe('running');
          expect(r.counts.queued, JSON.stringify(r.counts)).toBe(3);
          expect((await h.simStats()).tasksCreated).toBe(3);
          const fails = r.analysisRun?.queries[0]?.fail ?? 0;
          if (fails >= 1 && statusOut === '') {
            const status = await cli(h, ['status']);
            expect(status.code, status.out).toBe(0);
            statusOut = status.text;
          }
          return undefined;
        }
        return r.wave.index >= 1 ? r : undefined;
      },
      40_000,
      () => `the gate did not let wave 2 through: ${JSON.stringify(snapshots.at(-1)?.analysisVerdict)}`,
    );
    expect(opened.phase).not.toBe('halted');
    expect(opened.phase).not.toBe('paused');

    // The first measurement failed (the window reached back before the last outcome), later
    // ones passed; `status` showed the analysis running with what it measured.
    const seen = new Map<number, { outcome: string; detail: string }>();
    for (const s of snapshots)
      for (const m of s.analysisRun?.queries[0]?.measurements ?? []) seen.set(m.at, m);
    const measured = [...seen.entries()].sort(([a], [b]) => a - b).map(([, m]) => m);
    expect(measured[0]?.outcome, JSON.stringify(measured[0])).toBe('fail');
    expect(measured[0]?.detail).toMatch(/^[0-2] is not at least 3$/);
    // Failures, then passes only: once scraped, the count stays at 3.
    const sequence = measured.map((m) => m.outcome[0]).join('');
    expect(sequence).toMatch(/^f+p*$/);
    expect(snapshots.some((s) => s.analysisVerdict?.startsWith('running: '))).toBe(true);
    expect(statusOut).toContain(`analysing wave 1 before the next (running: `);
    expect(statusOut).toContain(`promote ${id}`);

    await h.waitFor(converged, 30_000);
    expect((await rolloutOf(h)).counts).toEqual({ succeeded: 6 });
    expect((await h.simStats()).tasksCreated).toBe(6);

    const events = await history(h, id);
    const at = (type: string, wave?: number) =>
      events.findIndex((e) => e.type === type && (wave === undefined || e.detail?.wave === wave));
    expect(at('wave.completed', 1)).toBeGreaterThanOrEqual(0);
    expect(at('rollout.baking', 1)).toBeGreaterThan(at('wave.completed', 1));
    expect(at('analysis.started', 1)).toBeGreaterThan(at('rollout.baking', 1));
    expect(at('analysis.passed', 1)).toBeGreaterThan(at('analysis.started', 1));
    expect(at('wave.started', 2)).toBeGreaterThan(at('analysis.passed', 1));
    expect(at('rollout.converged')).toBeGreaterThan(at('wave.started', 2));
    expect(types(events)).not.toContain('analysis.failed');
    expect(types(events)).not.toContain('analysis.inconclusive');
    // Wave 2 is the last: nothing follows it, so no second analysis.
    expect(types(events).filter((t) => t === 'analysis.started')).toHaveLength(1);
    const passed = events[at('analysis.passed', 1)] as RecordedEvent;
    const verdict = ((passed.detail?.queries ?? []) as QueryVerdict[])[0];
    expect(verdict?.name).toBe('wave-1-succeeded');
    expect(verdict?.fail).toBeGreaterThanOrEqual(1);
    expect(verdict?.pass).toBeGreaterThanOrEqual(2);
    expect((verdict?.pass ?? 0) + (verdict?.fail ?? 0)).toBe(11);
    expect(verdict?.inconclusive).toBe(0);
    expect(passed.message).toContain(`wave 1's analysis passed`);
    process.stdout.write(
      `analysis-gate e2e: wave 1's gate measured ${verdict?.fail} failed, then ${verdict?.pass} passed (seen: ${sequence})\n`,
    );
    // The counter the gate read holds wave 2's successes too, once scraped.
    await until(
      async () => {
        const q = await promQuery(
          url,
          `sum(fleet_upgrade_results_total{rollout="${id}", outcome="succeeded"})`,
        );
        return q.ok && q.series[0]?.value[1] === '6' ? true : undefined;
      },
      10_000,
      () => 'Prometheus did not scrape the 6 successes',
    );
  }, 90_000);

  it('a query without series pauses the rollout; promote then resume lets it converge', async () => {
    const url = prometheus?.url as string;
    // The policy's own gate: it holds wave 1 (the last wave has none). No series: inconclusive;
    // with the defaults (count 5, inconclusiveLimit 1) the second measurement pauses the rollout.
    const h = await start('inconclusive', {
      name: 'gate-empty',
      maxInFlight: 3,
      poll: { initial: '30s', max: '1m' },
      verify: false,
      waves: [3, '100%'],
      analysis: [
        {
          name: 'no-such-series',
          prometheus: url,
          query: `sum(fleet_upgrade_no_such_metric_total{policy="${POLICY_VAR}"})`,
          condition: { below: 1 },
          interval: '1m',
        },
      ],
    });
    const id = `gate-empty@${TARGET}`;
    const paused = await h.waitFor((s) => s.rollouts[0]?.phase === 'paused', 30_000);
    const r = paused.rollouts[0] as RolloutStatus;
    expect(r.wave.waitingFor).toBe('analysis');
    expect(r.wave.index).toBe(0);
    expect(r.pauseReason).toMatch(
      /^wave 1's analysis was inconclusive: no-such-series: 2 of 2 measurements inconclusive \(inconclusiveLimit 1\); last: no data: the query returned no series$/,
    );
    expect(r.analysisVerdict).toMatch(/^inconclusive: /);
    expect(r.counts).toEqual({ succeeded: 3, queued: 3 });

    const events = await history(h, id);
    const inconclusive = events.find((e) => e.type === 'analysis.inconclusive');
    expect(inconclusive?.source).toBe('gate');
    expect(inconclusive?.message).toContain(`resume ${id}`);
    expect(types(events).indexOf('analysis.started')).toBeLessThan(
      types(events).indexOf('analysis.inconclusive'),
    );
    expect(types(events)).not.toContain('analysis.passed');

    const status = await cli(h, ['status']);
    expect(status.code, status.out).toBe(0);
    expect(status.text).toContain(`paused wave 1's analysis was inconclusive`);
    expect(status.text).toContain('no data: the query returned no series');
    expect(status.text).toContain(`resume ${id}`);

    // Not knowing never lets a wave through: a simulated minute later, still three tasks.
    await new Promise((r) => setTimeout(r, 1000));
    expect((await h.simStats()).tasksCreated).toBe(3);
    expect((await rolloutOf(h)).phase).toBe('paused');

    const promoted = await cli(h, ['promote', id]);
    expect(promoted.code, promoted.out).toBe(0);
    expect(promoted.out).toMatch(
      /wave 2 of 2 opens now \(its analysis skipped\), once the rollout is resumed/,
    );
    await new Promise((r) => setTimeout(r, 500));
    const stillPaused = await rolloutOf(h);
    expect(stillPaused.phase).toBe('paused');
    expect(stillPaused.counts.queued).toBe(3);

    const resumed = await cli(h, ['resume', id]);
    expect(resumed.code, resumed.out).toBe(0);
    expect(resumed.out).toContain('released the pause');
    await h.waitFor(converged, 30_000);
    expect((await rolloutOf(h)).counts).toEqual({ succeeded: 6 });
    const after = types(await history(h, id));
    expect(after.indexOf('rollout.promoted')).toBeGreaterThan(after.indexOf('analysis.inconclusive'));
    expect(after.indexOf('rollout.resumed')).toBeGreaterThan(after.indexOf('rollout.promoted'));
    // promote opened wave 2 (it records rollout.promoted, not wave.started).
    const promotedEvent = (await history(h, id)).find((e) => e.type === 'rollout.promoted');
    expect(promotedEvent?.detail).toMatchObject({ wave: 2, ended: 'analysis', full: false });
    expect(after.filter((t) => t === 'analysis.started')).toHaveLength(1);
    expect(after).not.toContain('analysis.passed');
  }, 90_000);

  it('a failing condition halts the rollout; resume analyses again', async () => {
    const url = prometheus?.url as string;
    // "No success yet": false once a scrape has seen the first of wave 1's successes, which is
    // at the latest a second after it, before the bake (1 real second) ends or at the second
    // measurement; count 5 leaves room. A pass before that does not matter: one failed
    // measurement (failureLimit 0) fails the gate.
    const h = await start('fails', {
      name: 'gate-fails',
      maxInFlight: 3,
      poll: { initial: '30s', max: '1m' },
      verify: false,
      waves: [
        {
          size: 3,
          bake: '1m',
          analysis: [
            {
              name: 'no-successes',
              prometheus: url,
              query: `sum(fleet_upgrade_results_total{rollout="${ROLLOUT_VAR}", outcome="succeeded"}) or vector(0)`,
              condition: { below: 1 },
              interval: '1m',
              count: 5,
            },
          ],
        },
        '100%',
      ],
    });
    const id = `gate-fails@${TARGET}`;
    const halted = await h.waitFor((s) => s.rollouts[0]?.phase === 'halted', 30_000);
    const r = halted.rollouts[0] as RolloutStatus;
    expect(r.haltReason).toMatch(
      /^wave 1's analysis failed: no-successes: 1 of \d measurements? failed \(failureLimit 0\); last: [1-3] is not below 1$/,
    );
    expect(r.wave.waitingFor).toBe('analysis');
    expect(r.counts).toEqual({ succeeded: 3, queued: 3 });
    expect((await h.simStats()).tasksCreated).toBe(3);
    const failed = (await history(h, id)).filter((e) => e.type === 'analysis.failed');
    expect(failed).toHaveLength(1);
    expect(failed[0]?.source).toBe('gate');

    const status = await cli(h, ['status']);
    expect(status.code, status.out).toBe(0);
    expect(status.text).toContain(`halted: wave 1's analysis failed: no-successes`);

    // resume analyses afresh: the count is 3 now, so the first new measurement fails again.
    const resumed = await cli(h, ['resume', id]);
    expect(resumed.code, resumed.out).toBe(0);
    const again = await until(
      async () => {
        const events = await history(h, id);
        return events.filter((e) => e.type === 'analysis.failed').length >= 2 ? events : undefined;
      },
      20_000,
      () => 'no second analysis.failed after resume',
    );
    expect(types(again).indexOf('rollout.resumed')).toBeLessThan(types(again).lastIndexOf('analysis.failed'));
    const last = again.filter((e) => e.type === 'analysis.failed').at(-1);
    expect(last?.message).toContain('1 of 1 measurement failed (failureLimit 0); last: 3 is not below 1');
    const now = await rolloutOf(h);
    expect(now.phase).toBe('halted');
    expect(now.counts).toEqual({ succeeded: 3, queued: 3 });
    expect((await h.simStats()).tasksCreated).toBe(3);
  }, 90_000);
});
