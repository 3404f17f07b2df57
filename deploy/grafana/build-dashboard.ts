/**
 * Builds the fleet-upgrade Grafana dashboard with Grafana's own Foundation SDK, so that the JSON
 * follows Grafana's dashboard schema by construction (less the few fields the SDK writes that the
 * Grafana we deploy does not know: conformToGrafana; test/unit/deploy/grafana-schema.test.ts checks
 * the result against that Grafana's published schema). The generated file is committed
 * (deploy/grafana/dashboards/fleet-upgrade.json, provisioned as is); a unit test regenerates it
 * and fails when the two differ. Regenerate after an edit:
 *   npx tsx deploy/grafana/build-dashboard.ts
 * The queries and their reasons are in dashboard-queries.ts; docs/metrics.md says what each panel
 * means.
 */
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as bargauge from '@grafana/grafana-foundation-sdk/bargauge';
import type * as cog from '@grafana/grafana-foundation-sdk/cog';
import * as common from '@grafana/grafana-foundation-sdk/common';
import * as dashboard from '@grafana/grafana-foundation-sdk/dashboard';
import * as heatmap from '@grafana/grafana-foundation-sdk/heatmap';
import * as prometheus from '@grafana/grafana-foundation-sdk/prometheus';
import * as stat from '@grafana/grafana-foundation-sdk/stat';
import * as statetimeline from '@grafana/grafana-foundation-sdk/statetimeline';
import * as table from '@grafana/grafana-foundation-sdk/table';
import * as timeseries from '@grafana/grafana-foundation-sdk/timeseries';
import type { MetricState, OrgProblemKind, RolloutPhase } from '../../src/rollout/index.js';
import { ORG_PROBLEM_NUMBERS, PHASE_NUMBERS, Q } from './dashboard-queries.js';

export const DASHBOARD_UID = 'fleet-upgrade';
export const DASHBOARD_FILE = join(
  dirname(fileURLToPath(import.meta.url)),
  'dashboards',
  'fleet-upgrade.json',
);

/** Every panel queries the Prometheus picked in the `datasource` variable. */
// biome-ignore lint/suspicious/noTemplateCurlyInString: Grafana's variable syntax, not a JS template
export const DATASOURCE = { type: 'prometheus', uid: '${datasource}' } as const;
const DS: { type: string; uid: string } = DATASOURCE;
/** Failure share above which the alert FleetUpgradeFailureRateHigh fires (see the rules file). */
const FAILURE_THRESHOLD = 0.1;

const query = (refId: string, expr: string, legend: string) =>
  new prometheus.DataqueryBuilder().datasource(DS).refId(refId).expr(expr).legendFormat(legend).range();

const thresholds = (steps: [number | null, string][]) =>
  new dashboard.ThresholdsConfigBuilder()
    .mode(dashboard.ThresholdsMode.Absolute)
    .steps(steps.map(([value, color]) => ({ value, color })));

const legend = (asTable = false) =>
  new common.VizLegendOptionsBuilder()
    .showLegend(true)
    .displayMode(asTable ? common.LegendDisplayMode.Table : common.LegendDisplayMode.List)
    .placement(asTable ? common.LegendPlacement.Right : common.LegendPlacement.Bottom);

/** An instant query in table format, for table panels. */
const tableQuery = (refId: string, expr: string) =>
  new prometheus.DataqueryBuilder()
    .datasource(DS)
    .refId(refId)
    .expr(expr)
    .format(prometheus.PromQueryFormat.Table)
    .instant();

const lastValue = () => new common.ReduceDataOptionsBuilder().calcs(['lastNotNull']).values(false);

/** A dashed, unfilled, unstacked line: for limits drawn next to what they limit. */
const limitLine = (color: string): dashboard.DynamicConfigValue[] => [
  { id: 'custom.lineStyle', value: { fill: 'dash', dash: [10, 10] } },
  { id: 'custom.fillOpacity', value: 0 },
  { id: 'custom.stacking', value: { mode: 'none', group: 'A' } },
  { id: 'color', value: { mode: 'fixed', fixedColor: color } },
];

function timeSeries(title: string, description: string, unit: string, stacked = false) {
  return new timeseries.PanelBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .unit(unit)
    .min(0)
    .fillOpacity(stacked ? 60 : 10)
    .lineWidth(1)
    .stacking(
      new common.StackingConfigBuilder().mode(
        stacked ? common.StackingMode.Normal : common.StackingMode.None,
      ),
    )
    .legend(legend())
    .tooltip(
      new common.VizTooltipOptionsBuilder()
        .mode(common.TooltipDisplayMode.Multi)
        .sort(common.SortOrder.Descending),
    );
}

/** The colour of each phase on the phase timeline (its number is PHASE_NUMBERS's). */
const PHASE_COLORS: Record<RolloutPhase, string> = {
  running: 'blue',
  converged: 'green',
  paused: 'yellow',
  halted: 'red',
  aborted: 'dark-red',
  superseded: 'text',
};

/** Timeline value → phase name and colour, in the order of the phase numbers. */
const phaseMapping = (): dashboard.ValueMap => ({
  type: dashboard.MappingType.ValueToText,
  options: Object.fromEntries(
    Object.entries(PHASE_NUMBERS)
      .sort(([, a], [, b]) => a - b)
      .map(([phase, n], index) => [
        String(n),
        { text: phase, color: PHASE_COLORS[phase as RolloutPhase], index },
      ]),
  ),
});

/** How each kind of an organization's problem reads in the "waiting" column (0: it answers). */
const ORG_PROBLEM_TEXT: Record<OrgProblemKind, string> = {
  credentials: 'credentials refused',
  unavailable: 'service unavailable',
  unreachable: 'unreachable',
  rate_limited: 'rate limited (429s)',
  malformed: 'malformed answers',
};

/** "waiting" value → what its organization waits for (ORG_PROBLEM_NUMBERS), in red; 0 → no. */
const orgWaitingMapping = (): dashboard.ValueMap => ({
  type: dashboard.MappingType.ValueToText,
  options: {
    '0': { text: 'no', color: 'green', index: 0 },
    ...Object.fromEntries(
      Object.entries(ORG_PROBLEM_NUMBERS).map(([kind, n]) => [
        String(n),
        { text: ORG_PROBLEM_TEXT[kind as OrgProblemKind], color: 'red', index: n },
      ]),
    ),
  },
});

/** One row per organization: done, total, progress, why it waits, paused parts. */
function orgProgressTable() {
  return new table.PanelBuilder()
    .title('Progress by organization')
    .description(
      'Per organization, over the rollouts picked: Collectors with an outcome (done) out of all those selected (total). ' +
        "waiting: its service's problem (credentials refused, service unavailable or unreachable, 429s on every retry, malformed answers): " +
        'its part of every rollout waits while the other organizations go on, and goes on by itself once a probe answers (`fleet-upgrade status` says since when; alert FleetUpgradeOrganizationWaiting). ' +
        'paused parts: rollouts whose part in it an operator paused (`fleet-upgrade pause ROLLOUT --org ORG`).',
    )
    .datasource(DS)
    .withTarget(tableQuery('A', Q.orgDone))
    .withTarget(tableQuery('B', Q.orgTotal))
    .withTarget(tableQuery('C', Q.orgProgress))
    .withTarget(tableQuery('D', Q.orgWaiting))
    .withTarget(tableQuery('E', Q.orgPausedParts))
    .withTransformation({ id: 'merge', options: {} })
    .withTransformation({
      id: 'organize',
      options: {
        excludeByName: { Time: true },
        indexByName: { org: 0, 'Value #A': 1, 'Value #B': 2, 'Value #C': 3, 'Value #D': 4, 'Value #E': 5 },
        renameByName: {
          org: 'organization',
          'Value #A': 'done',
          'Value #B': 'total',
          'Value #C': 'progress',
          'Value #D': 'waiting',
          'Value #E': 'paused parts',
        },
      },
    })
    .overrideByName('progress', [
      { id: 'unit', value: 'percentunit' },
      { id: 'min', value: 0 },
      { id: 'max', value: 1 },
      { id: 'custom.cellOptions', value: { type: 'gauge', mode: 'basic' } },
    ])
    .overrideByName('waiting', [
      { id: 'mappings', value: [orgWaitingMapping()] },
      { id: 'custom.cellOptions', value: { type: 'color-text' } },
    ])
    .overrideByName('paused parts', [
      {
        id: 'thresholds',
        value: {
          mode: 'absolute',
          steps: [
            { value: null, color: 'text' },
            { value: 1, color: 'orange' },
          ],
        },
      },
      { id: 'custom.cellOptions', value: { type: 'color-text' } },
    ])
    .sortBy([new common.TableSortByFieldStateBuilder().displayName('organization')])
    .noValue('no organization')
    .span(24)
    .height(7);
}

/**
 * Fixed colours of the states on the "Collectors by state" panel: bad outcomes in reds and
 * oranges, waits in blue and yellow, a success under verification in light green, held
 * Collectors (the worklist, quarantined cohorts) in dark yellow and dark purple, an outcome that
 * cannot be known in light blue; pending,
 * progressing and skipped take the palette's.
 */
const STATE_COLORS: Partial<Record<MetricState, string>> = {
  queued: 'blue',
  waiting_retry: 'yellow',
  verifying: 'light-green',
  succeeded: 'green',
  failed: 'red',
  timed_out: 'orange',
  unhealthy: 'light-red',
  error: 'dark-orange',
  not_alive: 'purple',
  rejected: 'dark-red',
  manual: 'dark-yellow',
  unknown: 'light-blue',
  quarantined: 'dark-purple',
  aborted: 'text',
};

function progressRow(): cog.Builder<dashboard.Panel>[] {
  return [
    new bargauge.PanelBuilder()
      .title('Fleet progress')
      .description(
        'Per rollout: Collectors that succeeded, and that reached any outcome, out of all the Collectors the rollout selected.',
      )
      .datasource(DS)
      .withTarget(query('A', Q.progressSucceeded, '{{rollout}} succeeded'))
      .withTarget(query('B', Q.progressFinished, '{{rollout}} finished'))
      .unit('percentunit')
      .min(0)
      .max(1)
      .thresholds(thresholds([[null, 'blue']]))
      .displayMode(common.BarGaugeDisplayMode.Gradient)
      .orientation(common.VizOrientation.Horizontal)
      .reduceOptions(lastValue())
      .span(12)
      .height(8),
    new table.PanelBuilder()
      .title('Rollouts')
      .description('Each rollout (policy × target build) with its policy and the target the policy asks for.')
      .datasource(DS)
      .withTarget(tableQuery('A', Q.rolloutInfo))
      .withTransformation({
        id: 'organize',
        options: {
          excludeByName: { Time: true, Value: true },
          indexByName: { rollout: 0, policy: 1, target: 2 },
        },
      })
      .span(12)
      .height(8),
    orgProgressTable(),
    new statetimeline.PanelBuilder()
      .title('Rollout phase')
      .description(
        'running: admitting and upgrading; converged: every selected Collector has an outcome; ' +
          'paused by an operator or because its policy is disabled or removed (nothing new starts); ' +
          'halted: the failure gate (or a failed analysis) stopped admissions until `fleet-upgrade resume` (an edit of the policy does not release it); ' +
          'aborted: nothing more starts, ever; superseded: a newer target took over.',
      )
      .datasource(DS)
      .withTarget(query('A', Q.rolloutPhase, '{{rollout}}'))
      .mappings([phaseMapping()])
      .thresholds(thresholds([[null, 'text']]))
      .showValue(common.VisibilityMode.Never)
      .mergeValues(true)
      .span(24)
      .height(6),
    timeSeries(
      'Collectors by state: $rollout',
      'Collectors of the rollout in each state, stacked: the stack is the rollout; it turns green as it converges. ' +
        'waiting_retry: waits for a retry after a not-alive or error answer; ' +
        'error: the service answered every attempt with an error (not a create code).',
      'short',
      true,
    )
      .withTarget(query('A', Q.collectorsByState, '{{state}}'))
      .overrides(
        Object.entries(STATE_COLORS).map(([name, color]) => ({
          matcher: { id: 'byName', options: name },
          properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: color } }],
        })),
      )
      .repeat('rollout')
      .repeatDirection('h')
      .maxPerRow(2)
      .span(12)
      .height(8),
  ];
}

function outcomesRow(): cog.Builder<dashboard.Panel>[] {
  return [
    timeSeries(
      'Outcomes per minute',
      'Collectors reaching each outcome (a final state, or not_alive), per minute.',
      'short',
      true,
    )
      .withTarget(query('A', Q.outcomesPerMinute, '{{outcome}}'))
      .drawStyle(common.GraphDrawStyle.Bars)
      .span(12)
      .height(8),
    timeSeries(
      'Failure rate',
      `(failed + timed_out + unhealthy + error) / all outcomes but skipped, aborted, manual, unknown and quarantined, per rollout, over the interval. The dashed line is the alert threshold (${FAILURE_THRESHOLD * 100} %).`,
      'percentunit',
    )
      .withTarget(query('A', Q.failureRate, '{{rollout}}'))
      .max(1)
      .thresholds(
        thresholds([
          [null, 'green'],
          [FAILURE_THRESHOLD, 'red'],
        ]),
      )
      .thresholdsStyle(
        new common.GraphThresholdsStyleConfigBuilder().mode(common.GraphThresholdsStyleMode.Dashed),
      )
      .span(8)
      .height(8),
    new stat.PanelBuilder()
      .title('Failure ratio so far')
      .description(
        '(failed + timed_out + unhealthy + error) / Collectors with an outcome other than skipped, aborted, manual, unknown and quarantined, since the rollout began.',
      )
      .datasource(DS)
      .withTarget(query('A', Q.failureRatioSoFar, '{{rollout}}'))
      .unit('percentunit')
      .thresholds(
        thresholds([
          [null, 'green'],
          [0.05, 'orange'],
          [FAILURE_THRESHOLD, 'red'],
        ]),
      )
      .colorMode(common.BigValueColorMode.Value)
      .graphMode(common.BigValueGraphMode.None)
      .reduceOptions(lastValue())
      .span(4)
      .height(8),
    new heatmap.PanelBuilder()
      .title('Upgrade duration')
      .description(
        'From task request to final status, all rollouts and outcomes: Collectors per duration bucket and interval.',
      )
      .datasource(DS)
      .withTarget(
        new prometheus.DataqueryBuilder()
          .datasource(DS)
          .refId('A')
          .expr(Q.durationHeatmap)
          .legendFormat('{{le}}')
          .format(prometheus.PromQueryFormat.Heatmap)
          .range(),
      )
      .calculate(false)
      .yAxis(new heatmap.YAxisConfigBuilder().unit('s'))
      .cellValues(new heatmap.CellValuesBuilder().unit('short'))
      .color(
        new heatmap.HeatmapColorOptionsBuilder()
          .mode(heatmap.HeatmapColorMode.Scheme)
          .scheme('Oranges')
          .scale(heatmap.HeatmapColorScale.Exponential)
          .exponent(0.5)
          .steps(64),
      )
      .span(12)
      .height(8),
    timeSeries(
      'Upgrade duration percentiles (succeeded)',
      'p50, p90 and p99 of successful upgrades, all rollouts.',
      's',
    )
      .withTarget(query('A', Q.durationQuantile(0.5), 'p50'))
      .withTarget(query('B', Q.durationQuantile(0.9), 'p90'))
      .withTarget(query('C', Q.durationQuantile(0.99), 'p99'))
      .span(12)
      .height(8),
  ];
}

/** A stat per rollout, green at 0 and `color` from 1 on. */
function countStat(title: string, description: string, expr: string, color: string) {
  return new stat.PanelBuilder()
    .title(title)
    .description(description)
    .datasource(DS)
    .withTarget(query('A', expr, '{{rollout}}'))
    .unit('short')
    .thresholds(
      thresholds([
        [null, 'green'],
        [1, color],
      ]),
    )
    .colorMode(common.BigValueColorMode.Value)
    .graphMode(common.BigValueGraphMode.Area)
    .textMode(common.BigValueTextMode.ValueAndName)
    .reduceOptions(lastValue());
}

function holdsRow(): cog.Builder<dashboard.Panel>[] {
  return [
    timeSeries(
      'Verification: verifying and unhealthy',
      'Per rollout: successes under verification (the listings must show the Collector alive on the build, its heartbeat going on through the policy’s verify.bake), ' +
        'and unhealthy ones: the task succeeded but the Collector stopped heartbeating, never showed up alive on the build, or raised a new health event during the bake (a bad outcome for the failure gate; alert FleetUpgradeUnhealthyAfterUpgrade). ' +
        'Health verdicts (policy verify.healthEvents): new_event, Collectors made unhealthy by a new health event (the service says a Source stopped collecting); heartbeat_only, verified by heartbeat alone (a build before 19.308-2, an account without health events).',
      'short',
    )
      .withTarget(query('A', Q.verification, '{{rollout}} {{state}}'))
      .withTarget(query('B', Q.healthVerdicts, '{{rollout}} health {{verdict}}'))
      .overrides([
        {
          matcher: { id: 'byRegexp', options: '.* unhealthy' },
          properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'light-red' } }],
        },
        {
          matcher: { id: 'byRegexp', options: '.* health new_event' },
          properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'dark-red' } }],
        },
        {
          matcher: { id: 'byRegexp', options: '.* verifying' },
          properties: [{ id: 'color', value: { mode: 'fixed', fixedColor: 'light-green' } }],
        },
      ])
      .span(12)
      .height(8),
    countStat(
      'Worklist (manual, unknown)',
      'Collectors per rollout that need a person: manual (their failure needs one: disk space, upgrades disabled, permissions, or a class the policy sends to manual; `fleet-upgrade retry ROLLOUT --only manual` tries them again once fixed) and unknown (a create cut off before its answer, whose fate the service cannot tell: no task was made, or one ended short of the build; `fleet-upgrade retry ROLLOUT --only unknown` sends a new create). `fleet-upgrade report ROLLOUT --worklist` lists them; the failure gate does not count them.',
      Q.worklist,
      'orange',
    )
      .span(6)
      .height(8),
    countStat(
      'Rollbacks not possible',
      'Collectors per rollout that a rollback could not take back: the service no longer offers the build they came from (`fleet-upgrade report ROLLOUT` lists their ids).',
      Q.rollbackUnavailable,
      'red',
    )
      .span(6)
      .height(8),
    new table.PanelBuilder()
      .title('Quarantined cohorts')
      .description(
        'Cohorts (the policy’s cohorts.by: osName, osArch, from-build) whose failure rate was significantly above its cohorts.maxFailureRatio: their waiting Collectors are held while the others go on. ' +
          'held: Collectors held when the cohort was quarantined. `fleet-upgrade retry ROLLOUT --only quarantined` releases them (the row goes).',
      )
      .datasource(DS)
      .withTarget(tableQuery('A', Q.quarantinedCohorts))
      .withTransformation({
        id: 'organize',
        options: {
          excludeByName: { Time: true },
          indexByName: { rollout: 0, cohort: 1, Value: 2 },
          renameByName: { Value: 'held' },
        },
      })
      .noValue('no cohort quarantined')
      .span(24)
      .height(6),
  ];
}

function capacityRow(): cog.Builder<dashboard.Panel>[] {
  return [
    timeSeries(
      'In flight vs limit',
      'Collectors of each rollout holding an in-flight slot, against the policy’s maxInFlight (dashed). ' +
        'The count is the rollout’s own: the rollouts of one policy share its maxInFlight, so their sum is what the limit bounds.',
      'short',
    )
      .withTarget(query('A', Q.inflight, '{{rollout}} in flight'))
      .withTarget(query('B', Q.inflightLimit, '{{rollout}} limit'))
      .overrideByQuery('B', limitLine('red'))
      .span(8)
      .height(8),
    timeSeries('Tasks created per minute', 'Upgrade tasks created with the service, per rollout.', 'short')
      .withTarget(query('A', Q.tasksCreatedPerMinute, '{{rollout}}'))
      .span(8)
      .height(8),
    timeSeries(
      'Queue jobs by state',
      'BullMQ jobs of the upgrades queue; delayed jobs are tasks waiting for their next status poll.',
      'short',
    )
      .withTarget(query('A', Q.queueJobs, '{{state}}'))
      .span(8)
      .height(8),
    timeSeries(
      'API requests by status code',
      'Requests to the Collector Upgrade Service per second, stacked by status (0 = no answer), against the vendor limit of 4 requests/s per access ID (dashed).',
      'reqps',
      true,
    )
      .withTarget(query('A', Q.apiRequestsByCode, '{{code}}'))
      .withTarget(query('B', Q.vendorLimit, 'vendor limit'))
      .overrideByQuery('B', limitLine('red'))
      .overrideByName('429', [{ id: 'color', value: { mode: 'fixed', fixedColor: 'orange' } }])
      .span(12)
      .height(8),
    timeSeries(
      '429s and retries',
      'Answers 429 (rate limit exceeded) and retries by reason (collector_not_alive, rate_limited, server_error, network, error), per second.',
      'reqps',
    )
      .withTarget(query('A', Q.rateLimited, '429 answers'))
      .withTarget(query('B', Q.retriesByReason, 'retry: {{reason}}'))
      .overrideByQuery('A', [{ id: 'color', value: { mode: 'fixed', fixedColor: 'orange' } }])
      .span(12)
      .height(8),
    timeSeries(
      'API latency p90',
      'p90 of one HTTP request to the service, by endpoint (waits for the budget excluded).',
      's',
    )
      .withTarget(query('A', Q.apiLatencyP90, '{{endpoint}}'))
      .span(12)
      .height(8),
    timeSeries(
      'Waiting for the API budget',
      'Seconds spent waiting for the shared request budget, per second: above zero, the budget (not the workers) sets the pace.',
      's',
    )
      .withTarget(query('A', Q.budgetWait, 'budget wait'))
      .span(12)
      .height(8),
  ];
}

function complianceRow(): cog.Builder<dashboard.Panel>[] {
  return [
    timeSeries(
      'Compliance: share on target',
      'Per policy and organization, the share of the policy’s installed Collectors (alive or not, from the inventory of the whole fleet) on the build its target resolves to, or newer. ' +
        'Dashed: the policy’s complianceAlert.below; FleetUpgradeComplianceLow fires when the share stays under it for complianceAlert.for. Widen the time range for last month’s.',
      'percentunit',
    )
      .max(1)
      .withTarget(query('A', Q.complianceOnTarget, '{{policy}} {{org}}'))
      .withTarget(query('B', Q.complianceAlertBelow, '{{policy}} alert below'))
      .overrides([{ matcher: { id: 'byFrameRefID', options: 'B' }, properties: limitLine('red') }])
      .span(12)
      .height(8),
    timeSeries(
      'Compliance: share at or above minimumBuild',
      'Per policy that sets minimumBuild and organization, the share of its installed Collectors on that build or above (those below it are moved first, through windows and freezes).',
      'percentunit',
    )
      .max(1)
      .withTarget(query('A', Q.complianceMinimum, '{{policy}} {{org}}'))
      .span(12)
      .height(8),
    timeSeries(
      'Fleet: installed Collectors by build',
      'Every installed Collector of the picked organizations by the build it runs (fleet_upgrade_fleet_collectors; `fleet-upgrade fleet` prints the same table), stacked: how the fleet moves from build to build over time, whatever the policies select.',
      'short',
      true,
    )
      .withTarget(query('A', Q.fleetByBuild, '{{build}}'))
      .span(16)
      .height(8),
    timeSeries(
      'Fleet: offline Collectors',
      'Installed Collectors not alive, per organization: the upgradable listing leaves them out; a rollout reaches them once they come back.',
      'short',
    )
      .withTarget(query('A', Q.fleetOffline, '{{org}}'))
      .span(8)
      .height(8),
  ];
}

function processesRow(): cog.Builder<dashboard.Panel>[] {
  return [
    new stat.PanelBuilder()
      .title('Processes up')
      .description(
        'fleet-upgrade processes exporting metrics, by role (run also runs workers), and the scrape targets up and down.',
      )
      .datasource(DS)
      .withTarget(query('A', Q.processesByRole, '{{role}}'))
      .withTarget(query('B', Q.targetsUp, 'targets up'))
      .withTarget(query('C', Q.targetsDown, 'targets down'))
      .thresholds(
        thresholds([
          [null, 'red'],
          [1, 'green'],
        ]),
      )
      .overrideByQuery('C', [
        {
          id: 'thresholds',
          value: {
            mode: 'absolute',
            steps: [
              { value: null, color: 'green' },
              { value: 1, color: 'red' },
            ],
          },
        },
      ])
      .colorMode(common.BigValueColorMode.Background)
      .graphMode(common.BigValueGraphMode.None)
      .textMode(common.BigValueTextMode.ValueAndName)
      .reduceOptions(lastValue())
      .span(8)
      .height(6),
    timeSeries('Memory', 'Resident memory of each fleet-upgrade process.', 'bytes')
      .withTarget(query('A', Q.memory, '{{role}} {{instance}}'))
      .span(8)
      .height(6),
    timeSeries('CPU', 'CPU seconds per second of each fleet-upgrade process.', 'percentunit')
      .withTarget(query('A', Q.cpu, '{{role}} {{instance}}'))
      .span(8)
      .height(6),
  ];
}

/**
 * The `org` picker's values: the organizations of the rollouts' series and of the inventory (a
 * deployment with no rollout yet, or an organization no policy selects, still has its fleet).
 */
export const ORG_VARIABLE_QUERY =
  'label_values({__name__=~"fleet_upgrade_collectors|fleet_upgrade_fleet_collectors"}, org)';

export function buildDashboard(): dashboard.Dashboard {
  const builder = new dashboard.DashboardBuilder('fleet-upgrade')
    .uid(DASHBOARD_UID)
    .description(
      'Rollouts of the fleet-upgrade daemon across its organizations: progress (by organization too), outcomes, durations, verification, worklist and quarantined cohorts, in-flight, vendor API, the whole fleet by build and each policy’s compliance over time, and processes.',
    )
    .tags(['fleet-upgrade'])
    .editable()
    .tooltip(dashboard.DashboardCursorSync.Crosshair)
    .refresh('10s')
    .time({ from: 'now-1h', to: 'now' })
    .timezone('browser')
    .withVariable(
      new dashboard.DatasourceVariableBuilder('datasource').label('Data source').type('prometheus'),
    )
    .withVariable(
      new dashboard.QueryVariableBuilder('rollout')
        .label('Rollout')
        .datasource(DS)
        .query({ query: 'label_values(fleet_upgrade_rollout_info, rollout)', refId: 'rollout' })
        .definition('label_values(fleet_upgrade_rollout_info, rollout)')
        .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
        .sort(dashboard.VariableSort.NaturalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*')
        .current({ selected: true, text: ['All'], value: ['$__all'] }),
    )
    .withVariable(
      new dashboard.QueryVariableBuilder('org')
        .label('Organization')
        .description(
          "The organizations whose parts of the rollouts and whose fleet the panels show (`default` in a deployment without `orgs`): those of the rollouts' series and those of the inventory, so an organization no rollout covers can be picked too. A rollout's own figures (phase, limit, cohorts) show for the rollouts that cover one of them.",
        )
        .datasource(DS)
        .query({ query: ORG_VARIABLE_QUERY, refId: 'org' })
        .definition(ORG_VARIABLE_QUERY)
        .refresh(dashboard.VariableRefresh.OnTimeRangeChanged)
        .sort(dashboard.VariableSort.NaturalAsc)
        .multi(true)
        .includeAll(true)
        .allValue('.*')
        .current({ selected: true, text: ['All'], value: ['$__all'] }),
    );
  const rows: [string, cog.Builder<dashboard.Panel>[]][] = [
    ['Progress', progressRow()],
    ['Outcomes and durations', outcomesRow()],
    ['Verification, worklist and quarantined cohorts', holdsRow()],
    ['Capacity and the vendor API', capacityRow()],
    ['Fleet and compliance', complianceRow()],
    ['Processes', processesRow()],
  ];
  let id = 0;
  for (const [title, panels] of rows) {
    builder.withRow(new dashboard.RowBuilder(title).id(++id));
    for (const panel of panels) builder.withPanel(withId(panel, ++id));
  }
  return conformToGrafana(builder.build());
}

/**
 * Drops what the Foundation SDK (v0.0.21) writes but the schema of the Grafana we deploy (12.3,
 * `@grafana/schema` of the same version: test/unit/deploy/grafana-schema.test.ts) does not have:
 * `auto`, `auto_min` and `auto_count` on variables that are not interval variables, and the
 * table panels' `options.footer` (a hidden footer; Grafana 12.3 configures footers per field).
 */
function conformToGrafana(d: dashboard.Dashboard): dashboard.Dashboard {
  for (const v of d.templating?.list ?? []) {
    if (v.type === 'interval') continue;
    const loose = v as unknown as Record<string, unknown>;
    delete loose.auto;
    delete loose.auto_min;
    delete loose.auto_count;
  }
  const visit = (panels: readonly (dashboard.Panel | dashboard.RowPanel)[]) => {
    for (const p of panels) {
      if (p.type === 'row') visit((p as dashboard.RowPanel).panels ?? []);
      else if (p.type === 'table') {
        const options = (p as dashboard.Panel).options as Record<string, unknown> | undefined;
        if (options && (options.footer as { show?: boolean } | undefined)?.show === false)
          delete options.footer;
      }
    }
  };
  visit(d.panels ?? []);
  return d;
}

/** Panel ids fixed in the source, so that regenerating gives the same file. */
function withId(panel: cog.Builder<dashboard.Panel>, id: number): cog.Builder<dashboard.Panel> {
  return { build: () => ({ ...panel.build(), id }) };
}

/** The file's exact text: what the unit test compares with the committed file. */
export function dashboardJson(): string {
  return `${JSON.stringify(buildDashboard(), null, 2)}\n`;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  writeFileSync(DASHBOARD_FILE, dashboardJson());
  process.stdout.write(`wrote ${DASHBOARD_FILE}\n`);
}
