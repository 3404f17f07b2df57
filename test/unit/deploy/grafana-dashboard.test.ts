/**
 * The Grafana dashboard: the committed JSON is exactly what Grafana's Foundation SDK builds from
 * deploy/grafana/build-dashboard.ts (so the two never drift and the JSON follows Grafana's
 * schema), it has the `rollout` and `org` variables the issues ask for, every panel the README
 * describes, and its queries follow the aggregation rules of the metrics (max over Redis-derived
 * gauges, keeping `org`) and both variables.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  DASHBOARD_FILE,
  DASHBOARD_UID,
  DATASOURCE,
  dashboardJson,
} from '../../../deploy/grafana/build-dashboard.js';
import { ORG_PROBLEM_NUMBERS } from '../../../deploy/grafana/dashboard-queries.js';
import { ORG_PROBLEM_KINDS } from '../../../src/metrics/fleet-snapshot.js';
import {
  COLLECTOR_STATES,
  gateClass,
  isSettled,
  METRIC_STATES,
} from '../../../src/rollout/collector/index.js';
import {
  dashboardPanels,
  dashboardQueries,
  readCommittedDashboard,
} from '../../support/grafana-dashboard.js';

/** Exported by `run` from Redis, the same value in every `run` process: aggregate with max. */
const REDIS_GAUGES = [
  'fleet_upgrade_collectors',
  'fleet_upgrade_inflight',
  'fleet_upgrade_inflight_limit',
  'fleet_upgrade_queue_jobs',
  'fleet_upgrade_rollout_info',
  'fleet_upgrade_rollout_phase',
  'fleet_upgrade_cohort_quarantined',
  'fleet_upgrade_rollback_unavailable',
  'fleet_upgrade_rollout_org_info',
  'fleet_upgrade_rollout_org_paused',
  'fleet_upgrade_org_up',
  'fleet_upgrade_org_problem',
];
/** Metrics with a `rollout` label: the panels must follow the `rollout` variable on them. */
const ROLLOUT_METRICS = [
  'fleet_upgrade_collectors',
  'fleet_upgrade_inflight',
  'fleet_upgrade_inflight_limit',
  'fleet_upgrade_rollout_info',
  'fleet_upgrade_rollout_phase',
  'fleet_upgrade_results_total',
  'fleet_upgrade_tasks_created_total',
  'fleet_upgrade_cohort_quarantined',
  'fleet_upgrade_rollback_unavailable',
  'fleet_upgrade_rollout_org_info',
  'fleet_upgrade_rollout_org_paused',
];
/** Metrics with an `org` label: the panels must follow the `org` variable on them. */
const ORG_METRICS = [
  'fleet_upgrade_collectors',
  'fleet_upgrade_inflight',
  'fleet_upgrade_results_total',
  'fleet_upgrade_tasks_created_total',
  'fleet_upgrade_rollback_unavailable',
  'fleet_upgrade_rollout_org_info',
  'fleet_upgrade_rollout_org_paused',
  'fleet_upgrade_org_up',
  'fleet_upgrade_org_problem',
  'fleet_upgrade_api_requests_total',
  'fleet_upgrade_api_rate_limited_total',
];
/** Metrics of a whole rollout (no `org`): they follow `org` through the rollouts covering one picked. */
const WHOLE_ROLLOUT_METRICS = [
  'fleet_upgrade_rollout_info',
  'fleet_upgrade_rollout_phase',
  'fleet_upgrade_inflight_limit',
  'fleet_upgrade_cohort_quarantined',
];
const COVERS_PICKED_ORG =
  'and on (rollout)\nmax by (rollout) (fleet_upgrade_rollout_org_info{rollout=~"$rollout", org=~"$org"})';

/** Each occurrence of `name` as a whole metric name, with the selector that follows it. */
function occurrences(expr: string, name: string): { index: number; selector: string }[] {
  const out: { index: number; selector: string }[] = [];
  const re = new RegExp(`\\b${name}\\b(\\{[^}]*\\})?`, 'g');
  for (let m = re.exec(expr); m; m = re.exec(expr)) out.push({ index: m.index, selector: m[1] ?? '' });
  return out;
}

describe('Grafana dashboard', () => {
  it('is the JSON that build-dashboard.ts generates with the Foundation SDK', () => {
    const committed = readFileSync(DASHBOARD_FILE, 'utf8');
    expect(
      committed === dashboardJson(),
      'deploy/grafana/dashboards/fleet-upgrade.json is stale: run `npx tsx deploy/grafana/build-dashboard.ts`',
    ).toBe(true);
  });

  it('has a stable uid, the schema version the SDK writes and a Prometheus data source variable', () => {
    const d = readCommittedDashboard() as unknown as Record<string, unknown>;
    expect(d.uid).toBe(DASHBOARD_UID);
    expect(d.schemaVersion).toBeGreaterThanOrEqual(39);
    const vars = readCommittedDashboard().templating.list;
    expect(vars.find((v) => v.name === 'datasource')).toMatchObject({
      type: 'datasource',
      query: 'prometheus',
    });
  });

  it('has the rollout variable: label values of fleet_upgrade_rollout_info, multi, with All as .*', () => {
    const rollout = readCommittedDashboard().templating.list.find((v) => v.name === 'rollout');
    expect(rollout).toMatchObject({
      type: 'query',
      multi: true,
      includeAll: true,
      allValue: '.*',
      definition: 'label_values(fleet_upgrade_rollout_info, rollout)',
      query: { query: 'label_values(fleet_upgrade_rollout_info, rollout)' },
      datasource: DATASOURCE,
    });
  });

  it('has the org variable: the orgs of the rollouts and of the inventory, multi, with All as .*', () => {
    const org = readCommittedDashboard().templating.list.find((v) => v.name === 'org');
    expect(org).toMatchObject({
      type: 'query',
      multi: true,
      includeAll: true,
      allValue: '.*',
      definition: 'label_values({__name__=~"fleet_upgrade_collectors|fleet_upgrade_fleet_collectors"}, org)',
      query: {
        query: 'label_values({__name__=~"fleet_upgrade_collectors|fleet_upgrade_fleet_collectors"}, org)',
      },
      datasource: DATASOURCE,
    });
  });

  it('has every panel the issue lists', () => {
    const titles = dashboardPanels(readCommittedDashboard()).map((p) => p.title);
    for (const title of [
      'Fleet progress',
      'Collectors by state: $rollout',
      'Rollout phase',
      'Outcomes per minute',
      'Failure rate',
      'Upgrade duration',
      'Upgrade duration percentiles (succeeded)',
      'In flight vs limit',
      'API requests by status code',
      '429s and retries',
      'Queue jobs by state',
      'Processes up',
      'Verification: verifying and unhealthy',
      'Worklist (manual, unknown)',
      'Quarantined cohorts',
      'Rollbacks not possible',
      'Progress by organization',
    ]) {
      expect(titles, title).toContain(title);
    }
    const types = new Set(dashboardPanels(readCommittedDashboard()).map((p) => p.type));
    for (const type of ['heatmap', 'timeseries', 'bargauge', 'stat', 'state-timeline', 'table'])
      expect(types).toContain(type);
  });

  it('queries Prometheus through the datasource variable in every panel and target', () => {
    for (const panel of dashboardPanels(readCommittedDashboard())) {
      expect(panel.datasource, panel.title).toEqual(DATASOURCE);
      expect(panel.targets?.length, panel.title).toBeGreaterThan(0);
      for (const t of panel.targets ?? []) {
        expect(t.datasource, `${panel.title} ${t.refId}`).toEqual(DATASOURCE);
        expect(t.expr?.trim(), `${panel.title} ${t.refId}`).toBeTruthy();
      }
    }
  });

  it('panel ids are unique and refIds unique within a panel', () => {
    const d = readCommittedDashboard();
    const ids = d.panels.map((p) => p.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const panel of dashboardPanels(d)) {
      const refs = (panel.targets ?? []).map((t) => t.refId);
      expect(new Set(refs).size, panel.title).toBe(refs.length);
    }
  });

  it('takes max over the Redis-derived gauges (never sums the copies of several run processes)', () => {
    for (const q of dashboardQueries(readCommittedDashboard())) {
      for (const name of REDIS_GAUGES) {
        for (const { index } of occurrences(q.expr, name)) {
          const before = q.expr.slice(0, index);
          expect(before, `${q.panel} ${q.refId}: ${name} must sit directly in max by (...)`).toMatch(
            /max by \([^)]*\) \($/,
          );
        }
      }
    }
  });

  it('follows the rollout variable on every metric that has a rollout label', () => {
    const queries = dashboardQueries(readCommittedDashboard());
    let checked = 0;
    for (const q of queries) {
      for (const name of ROLLOUT_METRICS) {
        for (const { selector } of occurrences(q.expr, name)) {
          expect(selector, `${q.panel} ${q.refId}: ${name}`).toContain('rollout=~"$rollout"');
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(10);
  });

  it('follows the org variable on every metric that has an org label', () => {
    let checked = 0;
    for (const q of dashboardQueries(readCommittedDashboard())) {
      for (const name of ORG_METRICS) {
        for (const { selector } of occurrences(q.expr, name)) {
          expect(selector, `${q.panel} ${q.refId}: ${name}`).toContain('org=~"$org"');
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(20);
  });

  it('follows the org variable on the metrics of a whole rollout, through the rollouts that cover a picked organization', () => {
    let checked = 0;
    for (const q of dashboardQueries(readCommittedDashboard())) {
      if (!WHOLE_ROLLOUT_METRICS.some((name) => occurrences(q.expr, name).length > 0)) continue;
      expect(q.expr, `${q.panel} ${q.refId}`).toContain(COVERS_PICKED_ORG);
      checked++;
    }
    // Rollouts, Rollout phase, In flight vs limit (the limit), Quarantined cohorts.
    expect(checked).toBe(4);
  });

  it('keeps org in the max by (...) of the gauges that have it (a max across organizations keeps only the largest)', () => {
    let checked = 0;
    for (const q of dashboardQueries(readCommittedDashboard())) {
      // rollout_org_info is 1 for each organization a rollout covers: `max by (rollout)` of it
      // asks only whether the rollout covers a picked one.
      const counted = REDIS_GAUGES.filter(
        (n) => ORG_METRICS.includes(n) && n !== 'fleet_upgrade_rollout_org_info',
      );
      for (const name of counted) {
        for (const { index } of occurrences(q.expr, name)) {
          const by = /max by \(([^)]*)\) \($/.exec(q.expr.slice(0, index))?.[1] ?? '';
          expect(
            by.split(',').map((l) => l.trim()),
            `${q.panel} ${q.refId}: ${name}`,
          ).toContain('org');
          checked++;
        }
      }
    }
    expect(checked).toBeGreaterThan(15);
  });

  it('draws the API budget (the vendor limit, times the time scale in rehearsals) next to the API requests', () => {
    const q = dashboardQueries(readCommittedDashboard()).filter(
      (x) => x.panel === 'API requests by status code',
    );
    // One organization's budget times the organizations picked that made requests: their sum.
    expect(q.map((x) => x.expr)).toContain(
      'max(fleet_upgrade_api_budget_requests_per_second)\n* count(count by (org) (fleet_upgrade_api_requests_total{org=~"$org"}))',
    );
  });

  it('shows every state where states are shown: the panels take them from the state label, not a list', () => {
    const byState = dashboardQueries(readCommittedDashboard()).filter(
      (q) => q.panel === 'Collectors by state: $rollout',
    );
    expect(byState.map((q) => q.expr)).toEqual([
      'sum by (state) (max by (rollout, org, state) (fleet_upgrade_collectors{rollout=~"$rollout", org=~"$org"}))',
    ]);
    expect(METRIC_STATES).toEqual(
      expect.arrayContaining(['verifying', 'unhealthy', 'manual', 'quarantined']),
    );
  });

  it('counts failures and outcomes as the failure gate does (collector-state.ts), unhealthy bad, manual and quarantined not judged', () => {
    const regexes = (expr: string, label: string) =>
      [...expr.matchAll(new RegExp(`${label}=~"([^"]+)"`, 'g'))].map((m) =>
        (m[1] as string).split('|').sort(),
      );
    const bad = COLLECTOR_STATES.filter((s) => gateClass(s) === 'bad');
    const judged = COLLECTOR_STATES.filter((s) => gateClass(s) !== 'none');
    expect(bad).toContain('unhealthy');
    expect(judged).not.toContain('manual');
    expect(judged).not.toContain('quarantined');
    const queries = dashboardQueries(readCommittedDashboard());
    const rate = queries.find((q) => q.panel === 'Failure rate')?.expr ?? '';
    expect(regexes(rate, 'outcome')).toEqual([[...bad].sort(), [...judged].sort(), [...judged].sort()]);
    const soFar = queries.find((q) => q.panel === 'Failure ratio so far')?.expr ?? '';
    expect(regexes(soFar, 'state')).toEqual([[...bad].sort(), [...judged].sort()]);
    const finished = queries.find((q) => q.panel === 'Fleet progress' && q.refId === 'B')?.expr ?? '';
    expect(regexes(finished, 'state')[0]).toEqual(METRIC_STATES.filter((s) => isSettled(s)).sort());
  });

  it('lists the quarantined cohorts as a table of rollout, cohort and held', () => {
    const panel = dashboardPanels(readCommittedDashboard()).find((p) => p.title === 'Quarantined cohorts') as
      | (Record<string, unknown> & { targets: { expr: string; format: string; instant: boolean }[] })
      | undefined;
    expect(panel?.type).toBe('table');
    expect(panel?.targets[0]).toMatchObject({
      expr: `max by (rollout, cohort) (fleet_upgrade_cohort_quarantined{rollout=~"$rollout"})\n${COVERS_PICKED_ORG}`,
      format: 'table',
      instant: true,
    });
    expect(panel?.transformations).toEqual([
      expect.objectContaining({
        id: 'organize',
        options: expect.objectContaining({ renameByName: { Value: 'held' } }),
      }),
    ]);
  });

  it('shows progress by organization: done, total, progress, why it waits, paused parts, one row each', () => {
    const panel = dashboardPanels(readCommittedDashboard()).find(
      (p) => p.title === 'Progress by organization',
    ) as
      | (Record<string, unknown> & {
          targets: { refId: string; expr: string; format: string; instant: boolean }[];
          transformations: { id: string; options: Record<string, unknown> }[];
          fieldConfig: {
            overrides: { matcher: { options: string }; properties: { id: string; value: unknown }[] }[];
          };
        })
      | undefined;
    expect(panel?.type).toBe('table');
    const collectors = (states: string) =>
      `max by (rollout, org, state) (fleet_upgrade_collectors{rollout=~"$rollout", org=~"$org"${states}})`;
    const settled = `, state=~"${METRIC_STATES.filter((s) => isSettled(s)).join('|')}"`;
    const exprs = Object.fromEntries((panel?.targets ?? []).map((t) => [t.refId, t.expr]));
    expect(exprs.A).toBe(`sum by (org) (${collectors(settled)})`);
    expect(exprs.B).toBe(`sum by (org) (${collectors('')})`);
    expect(exprs.E).toBe(
      'sum by (org) (max by (rollout, org) (fleet_upgrade_rollout_org_paused{rollout=~"$rollout", org=~"$org"}))',
    );
    for (const t of panel?.targets ?? [])
      expect(t, t.refId).toMatchObject({ format: 'table', instant: true });
    // Waiting: every kind of problem has its own number, and the table reads each back as words.
    const numbers = Object.values(ORG_PROBLEM_NUMBERS);
    expect(Object.keys(ORG_PROBLEM_NUMBERS).sort()).toEqual([...ORG_PROBLEM_KINDS].sort());
    expect(new Set(numbers).size).toBe(numbers.length);
    expect(numbers).not.toContain(0);
    for (const [kind, n] of Object.entries(ORG_PROBLEM_NUMBERS))
      expect(exprs.D, kind).toContain(
        `${n} * max by (org) (fleet_upgrade_org_problem{org=~"$org", kind="${kind}"})`,
      );
    const waiting = panel?.fieldConfig.overrides.find((o) => o.matcher.options === 'waiting');
    const mappings = waiting?.properties.find((p) => p.id === 'mappings')?.value as {
      options: Record<string, { text: string }>;
    }[];
    expect(Object.keys(mappings[0]?.options ?? {}).sort()).toEqual(['0', ...numbers.map(String)].sort());
    expect(mappings[0]?.options['0']?.text).toBe('no');
    // The five queries merged into one row per organization, columns named.
    expect(panel?.transformations.map((t) => t.id)).toEqual(['merge', 'organize']);
    expect(panel?.transformations[1]?.options.renameByName).toMatchObject({
      org: 'organization',
      'Value #A': 'done',
      'Value #B': 'total',
      'Value #C': 'progress',
      'Value #D': 'waiting',
      'Value #E': 'paused parts',
    });
  });
});
