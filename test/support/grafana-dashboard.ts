/**
 * Reading the committed Grafana dashboard in tests: every Prometheus query of every panel (rows
 * and repeated panels included), and the Grafana variables replaced the way Grafana would, so
 * that Prometheus itself can evaluate the queries.
 */
import { readFileSync } from 'node:fs';
import { DASHBOARD_FILE } from '../../deploy/grafana/build-dashboard.js';

export interface DashboardPanel {
  id?: number;
  type: string;
  title?: string;
  datasource?: { type?: string; uid?: string };
  targets?: { refId?: string; expr?: string; datasource?: { type?: string; uid?: string } }[];
  panels?: DashboardPanel[];
  repeat?: string;
}

export interface Dashboard {
  uid: string;
  title: string;
  panels: DashboardPanel[];
  templating: { list: Record<string, unknown>[] };
}

export interface DashboardQuery {
  panel: string;
  refId: string;
  expr: string;
}

export function readCommittedDashboard(): Dashboard {
  return JSON.parse(readFileSync(DASHBOARD_FILE, 'utf8')) as Dashboard;
}

/** Panels other than rows, including those inside collapsed rows. */
export function dashboardPanels(dashboard: Dashboard): DashboardPanel[] {
  const out: DashboardPanel[] = [];
  const visit = (panels: readonly DashboardPanel[]) => {
    for (const p of panels) {
      if (p.type === 'row') visit(p.panels ?? []);
      else out.push(p);
    }
  };
  visit(dashboard.panels);
  return out;
}

export function dashboardQueries(dashboard: Dashboard): DashboardQuery[] {
  return dashboardPanels(dashboard).flatMap((p) =>
    (p.targets ?? []).map((t) => ({
      panel: p.title ?? `#${p.id}`,
      refId: t.refId ?? '?',
      expr: t.expr ?? '',
    })),
  );
}

/**
 * Replaces the dashboard's variables as Grafana does before sending a query: `$rollout` and
 * `$org` by a regex (All is `.*`, the default for `org`), `$__rate_interval` and `$__interval`
 * by a range.
 */
export function substituteVariables(
  expr: string,
  values: { rollout: string; interval: string; org?: string },
): string {
  const org = values.org ?? '.*';
  return expr
    .replaceAll('$__rate_interval', values.interval)
    .replaceAll('$__interval', values.interval)
    .replaceAll('$rollout', values.rollout)
    .replace(/\$\{rollout(:[a-z]+)?\}/g, values.rollout)
    .replaceAll('$org', org)
    .replace(/\$\{org(:[a-z]+)?\}/g, org);
}
