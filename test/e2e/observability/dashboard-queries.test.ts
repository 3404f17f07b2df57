/**
 * The dashboard and the alert rules proven against real scraped data: the simulator over HTTP,
 * the real CLI as child processes (`run` and one `worker`), Debian's real `prometheus` scraping
 * both every second with the alert rules loaded, during a 40-Collector rollout at 60× speed in
 * which a third of the upgrades fail (the Mac ones until their cohort is quarantined, the others
 * for want of disk space: the worklist) and a few upgraded Collectors stop at once (unhealthy
 * after verification). The settings name two organizations: `main`, whose Collectors those are,
 * and `locked`, whose credentials the service refuses (its part of the rollout waits while main's
 * goes on). Then, through Prometheus's HTTP API:
 * - every query of every dashboard panel (variables replaced as Grafana would) parses and
 *   returns at least one series, and the `rollout` and `org` variables' label_values list the
 *   rollout and both organizations;
 * - every alert rule is loaded and evaluates without error, its full expression parses, and each
 *   of its parts (test/support/promql-signals.ts) returns series. An alert's expression returns
 *   series only while it fires, so on this data its parts are what proves that every metric,
 *   label and function it relies on exists; the failure-rate alert, whose condition this
 *   rollout does meet, must in addition be pending for the rollout, and so must the unhealthy,
 *   quarantined-cohort and worklist alerts, each naming main, and the organization-waiting alert
 *   for locked;
 * - the verification, worklist and quarantined-cohort panels show what the rollout did, and the
 *   progress by organization shows main's progress and what locked waits for.
 * Loopback only; every wait is bounded; everything started here is stopped in afterAll.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, stringify } from 'yaml';
import { ORG_PROBLEM_NUMBERS } from '../../../deploy/grafana/dashboard-queries.js';
import { closeRedis, createRedis } from '../../../src/lib/redis/create-redis.js';
import { freeLoopbackPort } from '../../../src/lib/redis/redis-server.js';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { type RunningSimulator, startSimulator } from '../../../src/simulator/start-simulator.js';
import {
  dashboardQueries,
  readCommittedDashboard,
  substituteVariables,
} from '../../support/grafana-dashboard.js';
import {
  ensurePrometheusTools,
  promApi,
  promQuery,
  type RunningPrometheus,
  startPrometheus,
  stopChild,
} from '../../support/prometheus.js';
import { signalsOf } from '../../support/promql-signals.js';
import { deleteKeys, testRedisUrl } from '../../support/redis.js';

const ROOT = resolve(import.meta.dirname, '..', '..', '..');
const CLI = join(ROOT, 'bin', 'fleet-upgrade.js');
const RULES = join(ROOT, 'deploy/prometheus/rules/fleet-upgrade.rules.yml');
const TIME_SCALE = 60;
const USER = { accessId: 'observer', accessKey: 'observer-secret' };
/** The organization whose Collectors roll out, and the one whose credentials are refused. */
const MAIN = 'main';
const LOCKED = 'locked';
const POLICY = 'observability';
/** A policy that follows a ring no policy file defines: the daemon's own problem. */
const FOLLOWER = 'follower';
const COLLECTORS = 40;
/** What Grafana would send for `$__rate_interval` with a 1 s scrape interval, and a bit more. */
const INTERVAL = '15s';

/** The cohort (policy `cohorts.by: osName`) whose upgrades all fail: quarantined. */
const MAC = 'Mac OS X';
const MAC_COHORT = `osName=${MAC}`;

/**
 * 40 Collectors one build below the latest; every third one's upgrade fails: well above the
 * alert's 10 %, even though rate() does not count a counter's first sample. Those failures are
 * of two kinds: the Mac Collectors (every sixth) fail for an unknown reason (`failed`), and their
 * cohort is quarantined after three of them (the waiting ones are held); the others fail for want
 * of disk space, which the default failureCauses sends to the worklist (`manual`). Five Linux
 * Collectors stop heartbeating seconds after their upgrade succeeded: verification (the default
 * `verify`, a 5-minute bake) finds them unhealthy. One more (obs-2) stays alive but its LocalFile
 * Source stops collecting a minute after the upgrade: its health event makes it unhealthy too
 * (the health-verdict series).
 */
const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.450-12', '19.470-4'],
  users: [USER],
  behaviour: {
    stopAfterUpgrade: { afterSeconds: 5 },
    healthEvents: {
      sourceTypes: { Syslog: 1 },
      breaks: [{ build: '19.470-4', sourceType: 'LocalFile', ratio: 1, afterSeconds: 60 }],
    },
  },
  collectors: Array.from({ length: COLLECTORS }, (_, i) => ({
    id: 5000 + i,
    name: `obs-${i}`,
    version: '19.450-12',
    osName: i % 6 === 0 ? MAC : 'Linux',
    outcome: i % 3 === 0 ? ('fail' as const) : ('succeed' as const),
    ...(i % 3 === 0 ? { failureCause: i % 6 === 0 ? ('unknown' as const) : ('disk_space' as const) } : {}),
    ...(i % 3 !== 0 && i % 5 === 1 ? { stopsAfterUpgrade: true } : {}),
    ...(i === 2 ? { sourceType: 'LocalFile' } : {}),
    upgradeSeconds: 60 + (i % 5) * 30,
  })),
};

interface Spawned {
  child: ChildProcess;
  output(): string;
}

function spawnCli(args: string[], env: NodeJS.ProcessEnv): Spawned {
  const child = spawn(process.execPath, [CLI, ...args], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const keep = (d: Buffer) => {
    out = (out + d.toString()).slice(-10_000);
  };
  child.stdout?.on('data', keep);
  child.stderr?.on('data', keep);
  return { child, output: () => out };
}

/** Polls `check` every `everyMs` until it returns a value, or throws `describe()` after `limitMs`. */
async function waitUntil<T>(
  check: () => Promise<T | undefined>,
  limitMs: number,
  describe: () => string,
  everyMs = 250,
): Promise<T> {
  const deadline = Date.now() + limitMs;
  for (let i = 0; i < 10_000 && Date.now() < deadline; i++) {
    const value = await check().catch(() => undefined);
    if (value !== undefined) return value;
    await new Promise((r) => setTimeout(r, everyMs));
  }
  throw new Error(`not within ${limitMs} ms: ${describe()}`);
}

async function answers(url: string): Promise<boolean> {
  const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
  await res.arrayBuffer();
  return res.ok;
}

let dir = '';
let sim: RunningSimulator | undefined;
let prometheus: RunningPrometheus | undefined;
/** A webhook receiver on loopback: the notification metrics (and their alert) have series. */
let receiver: Server | undefined;
const processes: Spawned[] = [];
const prefix = `test:${randomBytes(6).toString('hex')}:`;
let startedAt = 0;
let dataAt = 0;

function diagnostics(): string {
  return [
    ...processes.map(
      (p, i) => `--- process ${i} (${p.child.exitCode ?? 'running'}):\n${p.output().slice(-2000)}`,
    ),
    `--- prometheus:\n${prometheus?.output().slice(-2000) ?? '(not started)'}`,
  ].join('\n');
}

beforeAll(async () => {
  startedAt = Date.now();
  const tools = await ensurePrometheusTools();
  dir = await mkdtemp(join(tmpdir(), 'fleet-observability-'));
  sim = await startSimulator({ fleet, timeScale: TIME_SCALE, port: 0 });
  const policyFile = join(dir, `${POLICY}.yaml`);
  await writeFile(
    policyFile,
    stringify({
      name: POLICY,
      target: 'latest',
      maxInFlight: 8,
      poll: { initial: '30s', max: '2m' },
      // Three outcomes suffice to judge a cohort: three Mac failures out of three quarantine it
      // (Wilson lower bound 0.44 > 0.3); the Linux cohort's few unhealthy ones never do.
      cohorts: { by: 'osName', maxFailureRatio: 0.3, minSample: 3 },
      // The compliance series (#21): the share on target and on or above minimumBuild (every
      // Collector is above it: none is moved first), and the complianceAlert's thresholds.
      minimumBuild: '19.400-5',
      complianceAlert: { below: 0.95, for: '1h' },
    }),
  );
  // A daemon problem of its own (FleetUpgradeDaemonProblem): a policy that follows a ring no file
  // defines. It covers only the locked organization, whose inventory never completes: it adds no
  // rollout, compliance or fleet series.
  const followerFile = join(dir, `${FOLLOWER}.yaml`);
  await writeFile(
    followerFile,
    stringify({ name: FOLLOWER, orgs: [LOCKED], after: { policy: 'no-such-ring' } }),
  );
  const [runPort, workerPort] = [await freeLoopbackPort(), await freeLoopbackPort()];
  receiver = createServer((req, res) => {
    req.resume();
    req.on('end', () => res.writeHead(204).end());
  });
  await new Promise<void>((resolve) => receiver?.listen(0, '127.0.0.1', resolve));
  const settingsFile = join(dir, 'fleet-upgrade.yaml');
  await writeFile(
    settingsFile,
    stringify({
      webhooks: [{ name: 'observer', url: `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/` }],
      // Both on the one simulator, which knows no user `locked`: its requests are answered 401.
      orgs: [
        { name: MAIN, baseUrl: sim.baseUrl, accessId: USER.accessId, accessKeyEnv: 'OBSERVER_MAIN_KEY' },
        { name: LOCKED, baseUrl: sim.baseUrl, accessId: 'locked', accessKeyEnv: 'OBSERVER_LOCKED_KEY' },
      ],
    }),
  );

  // The compose scrape config, pointed at the loopback processes, scraping every second.
  const compose = parse(await readFile(join(ROOT, 'deploy/prometheus/prometheus.yml'), 'utf8')) as {
    scrape_configs: { job_name: string }[];
  };
  const targets: Record<string, string> = {
    'fleet-upgrade-daemon': `127.0.0.1:${runPort}`,
    'fleet-upgrade-worker': `127.0.0.1:${workerPort}`,
  };
  const jobs = compose.scrape_configs.filter((j) => targets[j.job_name]);
  expect(jobs.map((j) => j.job_name).sort()).toEqual(Object.keys(targets).sort());
  const config = {
    global: { scrape_interval: '1s', scrape_timeout: '1s', evaluation_interval: '1s' },
    rule_files: [RULES],
    scrape_configs: jobs.map((j) => ({
      job_name: j.job_name,
      static_configs: [{ targets: [targets[j.job_name]] }],
    })),
  };
  prometheus = await startPrometheus(tools.prometheus, stringify(config));

  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    REDIS_URL: testRedisUrl(),
    FLEET_UPGRADE_KEY_PREFIX: prefix,
    FLEET_UPGRADE_TICK: '200ms',
    FLEET_UPGRADE_DATA_DIR: join(dir, 'data'),
    OBSERVER_MAIN_KEY: USER.accessKey,
    OBSERVER_LOCKED_KEY: 'not-the-key',
    LOG_LEVEL: 'warn',
  };
  const scale = ['--time-scale', String(TIME_SCALE)];
  processes.push(
    spawnCli(
      [
        'run',
        '--policy',
        policyFile,
        '--policy',
        followerFile,
        '--config',
        settingsFile,
        '--listen',
        `127.0.0.1:${runPort}`,
        ...scale,
      ],
      env,
    ),
  );
  processes.push(
    spawnCli(['worker', '--config', settingsFile, '--listen', `127.0.0.1:${workerPort}`, ...scale], env),
  );
  for (const port of [runPort, workerPort]) {
    await waitUntil(
      async () => ((await answers(`http://127.0.0.1:${port}/readyz`)) ? true : undefined),
      30_000,
      () => `127.0.0.1:${port}/readyz not ready\n${diagnostics()}`,
    );
  }

  // Bounded wait for data: both targets scraped a few times, and every kind of outcome counted:
  // successes, failures, the worklist, unhealthy ones, the Mac cohort quarantined, and the locked
  // organization waiting for its credentials.
  const url = prometheus.url;
  await waitUntil(
    async () => {
      const scrapes = await promQuery(
        url,
        'min(count_over_time(up{job=~"fleet-upgrade.*"}[1m]) * up{job=~"fleet-upgrade.*"})',
      );
      const outcomes = await promQuery(url, 'sum by (outcome) (fleet_upgrade_results_total)');
      const cohorts = await promQuery(url, 'max by (cohort) (fleet_upgrade_cohort_quarantined)');
      const locked = await promQuery(
        url,
        `max(fleet_upgrade_org_problem{org="${LOCKED}", kind="credentials"})`,
      );
      // The inventory's first pass of main, judged against the rollout's build.
      const compliance = await promQuery(
        url,
        `max(fleet_upgrade_compliance_ratio{org="${MAIN}", policy="${POLICY}", kind="minimum"})`,
      );
      if (!scrapes.ok || !outcomes.ok || !cohorts.ok || !locked.ok || !compliance.ok) return undefined;
      if (compliance.series.length === 0) return undefined;
      const enoughScrapes = Number(scrapes.series[0]?.value[1] ?? 0) >= 5;
      const seen = new Map(outcomes.series.map((s) => [s.metric.outcome, Number(s.value[1])]));
      const total = [...seen.values()].reduce((a, b) => a + b, 0);
      const quarantined = cohorts.series.some((s) => s.metric.cohort === MAC_COHORT);
      return enoughScrapes &&
        (seen.get('failed') ?? 0) >= 3 &&
        (seen.get('manual') ?? 0) >= 1 &&
        (seen.get('unhealthy') ?? 0) >= 1 &&
        total >= 20 &&
        quarantined &&
        Number(locked.series[0]?.value[1] ?? 0) === 1
        ? true
        : undefined;
    },
    90_000,
    () => `no scraped rollout data\n${diagnostics()}`,
    500,
  );
  dataAt = Date.now();
  // Long only when Debian's prometheus must first be installed (apt-get, serialized with other files).
}, 720_000);

afterAll(async () => {
  await new Promise((resolve) => (receiver ? receiver.close(resolve) : resolve(undefined)));
  for (const p of processes) await stopChild(p.child);
  await prometheus?.stop();
  await sim?.close();
  const redis = createRedis(testRedisUrl(), { name: 'test-cleanup' });
  await deleteKeys(redis, prefix);
  await closeRedis(redis);
  if (dir) await rm(dir, { recursive: true, force: true });
  process.stdout.write(
    `observability e2e: ${((dataAt - startedAt) / 1000).toFixed(1)} s until scraped rollout data, ` +
      `${((Date.now() - startedAt) / 1000).toFixed(1)} s in all\n`,
  );
}, 60_000);

describe('dashboard and alert rules against a real Prometheus scraping a rollout', () => {
  it('every query of every dashboard panel parses and returns series', async () => {
    const url = prometheus?.url as string;
    const queries = dashboardQueries(readCommittedDashboard());
    expect(queries.length).toBeGreaterThan(20);
    const problems: string[] = [];
    for (const q of queries) {
      const expr = substituteVariables(q.expr, { rollout: '.*', interval: INTERVAL });
      expect(expr, `${q.panel} ${q.refId}`).not.toContain('$');
      const r = await promQuery(url, expr);
      if (!r.ok) problems.push(`${q.panel} ${q.refId}: ${r.error}\n  ${expr}`);
      else if (r.series.length === 0) problems.push(`${q.panel} ${q.refId}: no series\n  ${expr}`);
    }
    expect(problems, `${problems.join('\n')}\n${diagnostics()}`).toEqual([]);
  });

  it('the queries see this rollout as it is: its policy, limit, progress and both process roles', async () => {
    const url = prometheus?.url as string;
    const rollouts = await promApi<string[]>(
      url,
      '/api/v1/label/rollout/values?match[]=fleet_upgrade_rollout_info',
    );
    const rollout = rollouts.find((r) => r.startsWith(`${POLICY}@`));
    expect(rollout, rollouts.join(', ')).toBe(`${POLICY}@19.470-4`);
    const one = async (expr: string) => {
      const r = await promQuery(
        url,
        substituteVariables(expr, { rollout: rollout as string, interval: INTERVAL }),
      );
      if (!r.ok) throw new Error(r.error);
      return r.series;
    };
    const info = await one(
      'max by (rollout, policy, target) (fleet_upgrade_rollout_info{rollout=~"$rollout"})',
    );
    expect(info.map((s) => s.metric)).toEqual([{ rollout, policy: POLICY, target: 'latest' }]);
    const limit = await one('max by (rollout) (fleet_upgrade_inflight_limit{rollout=~"$rollout"})');
    expect(limit.map((s) => Number(s.value[1]))).toEqual([8]);
    const total = await one(
      'sum by (rollout) (max by (rollout, state) (fleet_upgrade_collectors{rollout=~"$rollout"}))',
    );
    expect(total.map((s) => Number(s.value[1]))).toEqual([COLLECTORS]);
    const roles = await one('count by (role) (fleet_upgrade_process_info)');
    expect(roles.map((s) => s.metric.role).sort()).toEqual(['run', 'worker']);
    // The `org` variable's values, asked as Grafana asks them (label_values(SELECTOR, org) is
    // /api/v1/label/org/values?match[]=SELECTOR): both organizations.
    const orgVariable = readCommittedDashboard().templating.list.find((v) => v.name === 'org');
    const selector = /^label_values\((.+), org\)$/.exec(String(orgVariable?.definition))?.[1];
    expect(selector, 'the org variable is label_values(SELECTOR, org)').toBeDefined();
    const orgs = await promApi<string[]>(
      url,
      `/api/v1/label/org/values?match[]=${encodeURIComponent(selector as string)}`,
    );
    expect(orgs.sort()).toEqual([LOCKED, MAIN]);
  });

  it('every alert rule is loaded, evaluates without error, parses, and each of its parts returns series', async () => {
    const url = prometheus?.url as string;
    const doc = parse(await readFile(RULES, 'utf8')) as {
      groups: { rules: { alert: string; expr: string }[] }[];
    };
    const rules = doc.groups.flatMap((g) => g.rules);
    const loaded = await waitUntil(
      async () => {
        const data = await promApi<{
          groups: { rules: { name: string; health: string; lastError?: string; lastEvaluation: string }[] }[];
        }>(url, '/api/v1/rules');
        const all = data.groups.flatMap((g) => g.rules);
        return all.length === rules.length && all.every((r) => !r.lastEvaluation.startsWith('0001'))
          ? all
          : undefined;
      },
      15_000,
      () => 'the rules were not all evaluated',
    );
    for (const r of loaded)
      expect({ rule: r.name, health: r.health, error: r.lastError ?? '' }).toEqual({
        rule: r.name,
        health: 'ok',
        error: '',
      });

    const problems: string[] = [];
    for (const rule of rules) {
      const whole = await promQuery(url, rule.expr);
      if (!whole.ok) problems.push(`${rule.alert}: ${whole.error}`);
      for (const part of signalsOf(rule.expr)) {
        const r = await promQuery(url, part);
        if (!r.ok) problems.push(`${rule.alert}: ${r.error}\n  ${part}`);
        else if (r.series.length === 0)
          problems.push(`${rule.alert}: no series (is the metric exported?)\n  ${part}`);
      }
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('FleetUpgradeFailureRateHigh is pending for this rollout (a third of its upgrades fail)', async () => {
    const url = prometheus?.url as string;
    const alert = await waitUntil(
      async () => {
        const data = await promApi<{ alerts: { labels: Record<string, string>; state: string }[] }>(
          url,
          '/api/v1/alerts',
        );
        return data.alerts.find((a) => a.labels.alertname === 'FleetUpgradeFailureRateHigh');
      },
      15_000,
      () => 'FleetUpgradeFailureRateHigh never became active',
    );
    expect(alert.labels).toMatchObject({ severity: 'warning', rollout: `${POLICY}@19.470-4`, org: MAIN });
    expect(alert.state).toBe('pending');
  });

  it('the unhealthy, quarantined-cohort and worklist alerts are pending for this rollout', async () => {
    const url = prometheus?.url as string;
    const rollout = `${POLICY}@19.470-4`;
    const names = [
      'FleetUpgradeUnhealthyAfterUpgrade',
      'FleetUpgradeCohortQuarantined',
      'FleetUpgradeWorklistGrowing',
    ];
    const alerts = await waitUntil(
      async () => {
        const data = await promApi<{ alerts: { labels: Record<string, string>; state: string }[] }>(
          url,
          '/api/v1/alerts',
        );
        const found = names.map((n) => data.alerts.find((a) => a.labels.alertname === n));
        return found.every(Boolean) ? found : undefined;
      },
      15_000,
      () => `not all of ${names.join(', ')} became active`,
    );
    expect(alerts.map((a) => a?.labels)).toEqual([
      { alertname: names[0], severity: 'warning', rollout, org: MAIN },
      { alertname: names[1], severity: 'warning', rollout, cohort: MAC_COHORT },
      { alertname: names[2], severity: 'info', rollout, org: MAIN },
    ]);
    // Each waits its `for` (1m) before it fires.
    for (const a of alerts) expect(a?.state).toBe('pending');
  });

  it('FleetUpgradeDaemonProblem is pending for the policy that follows an undefined ring, not for the refused credentials', async () => {
    const url = prometheus?.url as string;
    const alerts = await waitUntil(
      async () => {
        const data = await promApi<{ alerts: { labels: Record<string, string>; state: string }[] }>(
          url,
          '/api/v1/alerts',
        );
        const found = data.alerts.filter((a) => a.labels.alertname === 'FleetUpgradeDaemonProblem');
        return found.length ? found : undefined;
      },
      15_000,
      () => 'FleetUpgradeDaemonProblem never became active',
    );
    expect(alerts.map((a) => a.labels)).toEqual([
      {
        alertname: 'FleetUpgradeDaemonProblem',
        severity: 'warning',
        kind: 'ring_undefined',
        subject: FOLLOWER,
      },
    ]);
    expect(alerts[0]?.state).toBe('pending');
  });

  it('the verification, worklist and quarantined-cohort panels show what the rollout did', async () => {
    const url = prometheus?.url as string;
    const rollout = `${POLICY}@19.470-4`;
    const queries = dashboardQueries(readCommittedDashboard());
    const panel = async (title: string) => {
      const q = queries.find((x) => x.panel === title);
      expect(q, title).toBeDefined();
      const r = await promQuery(url, substituteVariables(q?.expr ?? '', { rollout, interval: INTERVAL }));
      if (!r.ok) throw new Error(`${title}: ${r.error}`);
      return r.series.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
    };
    const verification = await panel('Verification: verifying and unhealthy');
    expect(verification.map((s) => s.metric.state).sort()).toEqual(['unhealthy', 'verifying']);
    const unhealthy = verification.find((s) => s.metric.state === 'unhealthy')?.value ?? 0;
    expect(unhealthy).toBeGreaterThanOrEqual(1);
    expect(unhealthy).toBeLessThanOrEqual(6);
    const verdicts = queries.filter((x) => x.panel === 'Verification: verifying and unhealthy')[1];
    const health = await promQuery(
      url,
      substituteVariables(verdicts?.expr ?? '', { rollout, interval: INTERVAL }),
    );
    if (!health.ok) throw new Error(health.error);
    expect(health.series.map((s) => [s.metric.verdict, Number(s.value[1])])).toEqual([['new_event', 1]]);
    const worklist = await panel('Worklist (manual, unknown)');
    expect(worklist).toHaveLength(1);
    expect(worklist[0]?.value).toBeGreaterThanOrEqual(1);
    expect(worklist[0]?.value).toBeLessThanOrEqual(7);
    const cohorts = await panel('Quarantined cohorts');
    expect(cohorts.map((s) => s.metric)).toEqual([{ rollout, cohort: MAC_COHORT }]);
    // Held: the Mac Collectors still waiting when it was quarantined (3 of the 7 had failed).
    expect(cohorts[0]?.value).toBeLessThanOrEqual(4);
    expect(await panel('Rollbacks not possible')).toEqual([{ metric: { rollout }, value: 0 }]);
  });

  it('progress by organization: main goes on, locked waits for its credentials (and its alert is pending)', async () => {
    const url = prometheus?.url as string;
    const queries = dashboardQueries(readCommittedDashboard()).filter(
      (q) => q.panel === 'Progress by organization',
    );
    expect(queries.map((q) => q.refId)).toEqual(['A', 'B', 'C', 'D', 'E']);
    const column: Record<string, Record<string, number>> = {};
    // One instant for every query of the panel, as Grafana asks them: a scrape between two of them
    // would set one organization's progress against another moment's count.
    const at = Date.now() / 1000;
    for (const q of queries) {
      const r = await promQuery(url, substituteVariables(q.expr, { rollout: '.*', interval: INTERVAL }), at);
      if (!r.ok) throw new Error(`${q.refId}: ${r.error}`);
      column[q.refId] = Object.fromEntries(r.series.map((s) => [s.metric.org, Number(s.value[1])]));
    }
    const [done, total, progress, waiting, paused] = ['A', 'B', 'C', 'D', 'E'].map(
      (ref) => column[ref] ?? {},
    );
    // main: every one of its Collectors selected, at least the 20 outcomes waited for; locked: none listed.
    expect(total).toEqual({ [MAIN]: COLLECTORS, [LOCKED]: 0 });
    expect(done?.[MAIN]).toBeGreaterThanOrEqual(20);
    expect(progress?.[MAIN]).toBeCloseTo((done?.[MAIN] ?? 0) / COLLECTORS, 6);
    // What each waits for: nothing (0), or its credentials (the number of `credentials`).
    expect(waiting).toEqual({ [MAIN]: 0, [LOCKED]: ORG_PROBLEM_NUMBERS.credentials });
    expect(paused).toEqual({ [MAIN]: 0, [LOCKED]: 0 });
    // Picking one organization shows it alone.
    const onlyMain = await promQuery(
      url,
      substituteVariables(queries[1]?.expr ?? '', { rollout: '.*', interval: INTERVAL, org: MAIN }),
    );
    expect(onlyMain.ok && onlyMain.series.map((s) => s.metric.org)).toEqual([MAIN]);

    const alert = await waitUntil(
      async () => {
        const data = await promApi<{ alerts: { labels: Record<string, string>; state: string }[] }>(
          url,
          '/api/v1/alerts',
        );
        return data.alerts.find((a) => a.labels.alertname === 'FleetUpgradeOrganizationWaiting');
      },
      15_000,
      () => 'FleetUpgradeOrganizationWaiting never became active',
    );
    expect(alert.labels).toEqual({
      alertname: 'FleetUpgradeOrganizationWaiting',
      severity: 'warning',
      org: LOCKED,
      kind: 'credentials',
    });
    // It waits its `for` (10m) before it fires.
    expect(alert.state).toBe('pending');
  });

  it('the fleet and compliance panels show the fleet by build and the policy’s shares, as the simulator has it', async () => {
    const url = prometheus?.url as string;
    const queries = dashboardQueries(readCommittedDashboard());
    const panel = async (title: string, refId = 'A') => {
      const q = queries.find((x) => x.panel === title && x.refId === refId);
      expect(q, title).toBeDefined();
      const r = await promQuery(
        url,
        substituteVariables(q?.expr ?? '', { rollout: '.*', interval: INTERVAL }),
      );
      if (!r.ok) throw new Error(`${title}: ${r.error}`);
      return r.series.map((s) => ({ metric: s.metric, value: Number(s.value[1]) }));
    };
    // Every Collector of main, on one build or the next (the rollout moves them).
    const byBuild = await panel('Fleet: installed Collectors by build');
    expect(byBuild.every((s) => ['19.450-12', '19.470-4'].includes(s.metric.build ?? ''))).toBe(true);
    expect(byBuild.reduce((n, s) => n + s.value, 0)).toBe(COLLECTORS);
    const onTarget = await panel('Compliance: share on target');
    expect(onTarget.map((s) => s.metric)).toEqual([{ policy: POLICY, org: MAIN }]);
    expect(onTarget[0]?.value).toBeGreaterThanOrEqual(0);
    expect(onTarget[0]?.value).toBeLessThanOrEqual(1);
    expect(await panel('Compliance: share on target', 'B')).toEqual([
      { metric: { policy: POLICY }, value: 0.95 },
    ]);
    // Every Collector is on or above minimumBuild 19.400-5.
    expect(await panel('Compliance: share at or above minimumBuild')).toEqual([
      { metric: { policy: POLICY, org: MAIN }, value: 1 },
    ]);
  });
});
