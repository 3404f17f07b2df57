/**
 * The committed dashboard against Grafana's published schema, `@grafana/schema` at the version of
 * the Grafana that docker-compose.yml runs (docker-compose-validate.test.ts keeps the two equal):
 * the dashboard against its `Dashboard` type, and each panel's `options` and
 * `fieldConfig.defaults.custom` against the types of its panel plugin (Grafana fills in the
 * options a panel leaves out, so those may be partial). Checked by the TypeScript compiler
 * (test/support/typecheck-literals.ts): an unknown field, a wrong type or a value outside an enum
 * is an error. A broken copy shows that each kind of mistake is caught. grafana-dashboard.test.ts
 * checks what the dashboard shows and queries.
 */
import { describe, expect, it } from 'vitest';
import {
  type Dashboard,
  type DashboardPanel,
  dashboardPanels,
  readCommittedDashboard,
} from '../../support/grafana-dashboard.js';
import { type TypedValue, typecheckLiterals } from '../../support/typecheck-literals.js';

const RAW = '@grafana/schema/dist/types/raw/composable';
/** The schema of each panel plugin the dashboard uses; `custom`: the plugin has field options. */
const PANEL_SCHEMAS: Record<string, { module: string; custom: boolean }> = {
  timeseries: { module: `${RAW}/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen`, custom: true },
  heatmap: { module: `${RAW}/heatmap/panelcfg/x/HeatmapPanelCfg_types.gen`, custom: true },
  bargauge: { module: `${RAW}/bargauge/panelcfg/x/BarGaugePanelCfg_types.gen`, custom: false },
  stat: { module: `${RAW}/stat/panelcfg/x/StatPanelCfg_types.gen`, custom: false },
  'state-timeline': {
    module: `${RAW}/statetimeline/panelcfg/x/StateTimelinePanelCfg_types.gen`,
    custom: true,
  },
  table: { module: `${RAW}/table/panelcfg/x/TablePanelCfg_types.gen`, custom: true },
};
const PANEL_TYPES = Object.keys(PANEL_SCHEMAS);
const IMPORTS = [
  "import type { Dashboard } from '@grafana/schema';",
  ...PANEL_TYPES.map((t, i) => `import type * as Panel${i} from '${PANEL_SCHEMAS[t]?.module}';`),
].join('\n');

/**
 * Fields that Grafana itself writes into dashboards but its published schema leaves out: a query
 * variable's `definition` (the query as the variable editor shows it). Removed before the check.
 */
function withoutUnpublishedFields(dashboard: Dashboard): Dashboard {
  const copy = structuredClone(dashboard);
  for (const v of copy.templating.list) if (v.type === 'query') delete v.definition;
  return copy;
}

type SchemaPanel = DashboardPanel & {
  options?: unknown;
  fieldConfig?: { defaults?: { custom?: unknown } };
};

/** What the dashboard and its panels break of the schema: one line each. */
function schemaProblems(dashboard: Dashboard): string[] {
  const values: TypedValue[] = [
    { label: 'dashboard', type: 'Dashboard', value: withoutUnpublishedFields(dashboard) },
  ];
  const problems: string[] = [];
  for (const panel of dashboardPanels(dashboard) as SchemaPanel[]) {
    const i = PANEL_TYPES.indexOf(panel.type);
    const schema = PANEL_SCHEMAS[panel.type];
    if (!schema) {
      problems.push(`${panel.title}: no schema known for panel type ${panel.type}: add it to PANEL_SCHEMAS`);
      continue;
    }
    values.push({
      label: `${panel.title}: options`,
      type: `Panel${i}.Options`,
      value: panel.options ?? {},
      partial: true,
    });
    const custom = panel.fieldConfig?.defaults?.custom;
    if (schema.custom) {
      values.push({
        label: `${panel.title}: custom`,
        type: `Panel${i}.FieldConfig`,
        value: custom ?? {},
        partial: true,
      });
    } else if (custom !== undefined && Object.keys(custom as object).length > 0) {
      problems.push(`${panel.title}: a ${panel.type} panel has no field options, but custom is set`);
    }
  }
  return [...problems, ...typecheckLiterals({ imports: IMPORTS, values })];
}

describe("Grafana dashboard against Grafana's published schema (@grafana/schema)", () => {
  it('the dashboard and every panel follow the schema of the Grafana version compose runs', () => {
    const dashboard = readCommittedDashboard();
    expect(new Set(dashboardPanels(dashboard).map((p) => p.type))).toEqual(new Set(PANEL_TYPES));
    expect(schemaProblems(dashboard)).toEqual([]);
  });

  it('rejects an unknown field, a wrong type and a value outside an enum (not a no-op)', () => {
    const broken = structuredClone(readCommittedDashboard()) as Dashboard & Record<string, unknown>;
    broken.graphTooltip = 'crosshair'; // a number (0, 1, 2)
    const panels = dashboardPanels(broken) as SchemaPanel[];
    const series = panels.find((p) => p.type === 'timeseries') as SchemaPanel & Record<string, unknown>;
    series.gridPosition = { h: 8, w: 12, x: 0, y: 0 }; // gridPos
    const stat = panels.find((p) => p.type === 'stat') as SchemaPanel;
    (stat.options as Record<string, unknown>).colorMode = 'rainbow';
    const table = panels.find((p) => p.type === 'table') as SchemaPanel;
    (table.options as Record<string, unknown>).footer = { show: true };
    const problems = schemaProblems(broken).join('\n');
    expect(problems).toMatch(/dashboard, .*"graphTooltip": "crosshair".*not assignable/);
    expect(problems).toMatch(/dashboard, .*unknown field 'gridPosition'/);
    expect(problems).toMatch(/: options, .*"colorMode": "rainbow".*not assignable/);
    expect(problems).toMatch(/: options, .*unknown field 'footer'/);
  });
});
