/**
 * `fleet-upgrade fleet` as a table (80 columns; `--wide` every organization a column), CSV or
 * JSON, from the one view of fleet-view.ts. The table: a line of totals, a line per organization
 * whose inventory has something to tell (none yet, failing), the installed Collectors by build ×
 * organization with each build's share of the fleet and its offline ones, the oldest builds, then
 * each policy's compliance per organization: the build its target resolves to, its Collectors,
 * the shares on target (or newer), behind, unknown and on or above its minimumBuild, and under it
 * what its complianceAlert says. Organizations that do not fit 80 columns are summed in one
 * column (`+N orgs`). Names from outside (OS names are not shown; policy and organization names
 * are ours) need no sanitizing except the service's error messages.
 */
import { formatDuration } from '../../lib/duration.js';
import { compareBuildVersions, isBuildVersion } from '../../lib/version.js';
import { formatWhen, oneLine } from './explain-rollout.js';
import { compareBuildsNewestFirst, type FleetView, type OrgView, type PolicyRow } from './fleet-view.js';
import { wrapText } from './format-status.js';

export interface FleetFormat {
  /** Every organization a column of its own (default false: what fits `width`). */
  wide?: boolean;
  /** Columns (default 80). */
  width?: number;
}

const count = (n: number) => n.toLocaleString('en-US');
const percent = (part: number, whole: number) => (whole > 0 ? `${((100 * part) / whole).toFixed(1)}%` : '-');
/** A complianceAlert's `for`: whole days as `7d`, else as the settings write durations. */
const forText = (ms: number) =>
  ms >= 86_400_000 && ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : formatDuration(ms);
/** A threshold as written: 0.95 as `95%`, 0.975 as `97.5%`. */
const threshold = (ratio: number) => `${Number((100 * ratio).toFixed(2))}%`;
const plural = (n: number, one: string, many = `${one}s`) => `${count(n)} ${n === 1 ? one : many}`;

/** Rows of cells as aligned text: the first column left-aligned, the others right-aligned. */
function align(rows: readonly string[][], left = 1): string[] {
  const widths: number[] = [];
  for (const row of rows)
    for (const [i, cell] of row.entries()) widths[i] = Math.max(widths[i] ?? 0, cell.length);
  return rows.map((row) =>
    row
      .map((cell, i) => (i < left ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0)))
      .join('  ')
      .trimEnd(),
  );
}

/** The first line: how many Collectors in how many organizations. */
function totals(view: FleetView): string {
  const collectors = view.orgs.reduce((n, o) => n + o.collectors, 0);
  const offline = view.orgs.reduce((n, o) => n + o.offline, 0);
  return (
    `${plural(view.orgs.length, 'organization')}, ${plural(collectors, 'installed Collector')}: ` +
    `${count(collectors - offline)} alive, ${count(offline)} offline`
  );
}

/** When each organization was last inventoried, and which have a problem. */
function passLines(view: FleetView, now: number, width: number): string[] {
  const lines: string[] = [];
  const done = view.orgs.filter((o) => o.inventoriedAt !== undefined);
  if (done.length) {
    const at = done.map((o) => o.inventoriedAt as number);
    const next = done.map((o) => o.nextAt).filter((n): n is number => n !== undefined);
    const oldest = Math.min(...at);
    const newest = Math.max(...at);
    const when =
      oldest === newest
        ? formatWhen(oldest, now)
        : `${formatWhen(oldest, now)} to ${formatWhen(newest, now)}`;
    const nextText = next.length ? `; next pass ${formatWhen(Math.max(now, Math.min(...next)), now)}` : '';
    lines.push(`inventoried ${when}${nextText}`);
  }
  for (const o of view.orgs) {
    if (o.failures > 0 && o.lastError) {
      const last =
        o.inventoriedAt === undefined ? 'no pass yet' : `last complete ${formatWhen(o.inventoriedAt, now)}`;
      const text =
        `org ${o.org}: inventory failing (${plural(o.failures, 'pass', 'passes')} in a row, ${last}): ` +
        `${oneLine(o.lastError.message)}`;
      lines.push(...wrapText(text, width, '', '  '));
    } else if (o.inventoriedAt === undefined) lines.push(`org ${o.org}: no inventory yet`);
  }
  return lines;
}

/** The organizations with a column of their own, and those summed in one. */
function splitColumns(view: FleetView, format: FleetFormat): { shown: OrgView[]; rest: OrgView[] } {
  if (format.wide) return { shown: view.orgs, rest: [] };
  const width = format.width ?? 80;
  const buildWidth = Math.max(5, ...view.builds.map((b) => b.length));
  const total = view.orgs.reduce((n, o) => n + o.collectors, 0);
  const numberWidth = Math.max(5, count(total).length);
  // BUILD, the organizations, ALL, SHARE, OFFLINE: two spaces between columns.
  const fixed = buildWidth + 2 + (numberWidth + 2) + (6 + 2) + Math.max(7, numberWidth);
  const columnOf = (o: OrgView) => Math.max(o.org.length, numberWidth) + 2;
  const shown: OrgView[] = [];
  let used = fixed;
  for (const [i, o] of view.orgs.entries()) {
    const restColumn = i < view.orgs.length - 1 ? numberWidth + 2 + 2 : 0;
    if (used + columnOf(o) + restColumn > width) break;
    shown.push(o);
    used += columnOf(o);
  }
  return { shown, rest: view.orgs.slice(shown.length) };
}

function buildTable(view: FleetView, format: FleetFormat): string[] {
  const { shown, rest } = splitColumns(view, format);
  const total = view.orgs.reduce((n, o) => n + o.collectors, 0);
  const cell = (o: OrgView, build: string) => o.builds.find((b) => b.build === build);
  const header = [
    'BUILD',
    ...shown.map((o) => o.org),
    ...(rest.length ? [`+${plural(rest.length, 'org')}`] : []),
    'ALL',
    'SHARE',
    'OFFLINE',
  ];
  const rows = view.builds.map((build) => {
    const of = (orgs: OrgView[], key: 'collectors' | 'offline') =>
      orgs.reduce((n, o) => n + (cell(o, build)?.[key] ?? 0), 0);
    const all = of(view.orgs, 'collectors');
    return [
      build,
      ...shown.map((o) => count(cell(o, build)?.collectors ?? 0)),
      ...(rest.length ? [count(of(rest, 'collectors'))] : []),
      count(all),
      percent(all, total),
      count(of(view.orgs, 'offline')),
    ];
  });
  const sum = (orgs: OrgView[]) => orgs.reduce((n, o) => n + o.collectors, 0);
  const footer = [
    'total',
    ...shown.map((o) => count(o.collectors)),
    ...(rest.length ? [count(sum(rest))] : []),
    count(total),
    total > 0 ? '100%' : '-',
    count(view.orgs.reduce((n, o) => n + o.offline, 0)),
  ];
  const lines = align([header, ...rows, footer]);
  if (rest.length)
    lines.push(
      ...wrapText(
        `+${plural(rest.length, 'org')}: ${rest.map((o) => o.org).join(', ')} (\`--wide\` gives each a column, \`--org NAME\` shows one)`,
        format.width ?? 80,
        '',
        '  ',
      ),
    );
  return lines;
}

function oldestLine(view: FleetView, width: number): string[] {
  if (view.oldest.length === 0) return [];
  const parts = view.oldest.map((o) => {
    const where = Object.entries(o.byOrg).map(([org, n]) => `${org} ${count(n)}`);
    return view.orgs.length > 1
      ? `${o.build} (${count(o.collectors)}: ${where.join(', ')})`
      : `${o.build} (${count(o.collectors)})`;
  });
  return wrapText(`oldest builds: ${parts.join('; ')}`, width, '', '  ');
}

/** The newest builds with when this deployment first saw them: what `minAge` counts from. */
function firstSeenLine(view: FleetView, now: number, width: number): string[] {
  if (!view.firstSeen?.length) return [];
  const parts = view.firstSeen.map((s) => `${s.build} ${formatWhen(s.at, now)}`);
  return wrapText(`first seen here (minAge counts from it): ${parts.join('; ')}`, width, '', '  ');
}

/** Under a policy's rows: its minimum, and its alert's state in each organization. */
function policyNote(rows: readonly PolicyRow[], now: number): string | undefined {
  const first = rows[0];
  if (!first) return undefined;
  const parts: string[] = [];
  if (first.minimumBuild) parts.push(`minimumBuild ${first.minimumBuild}`);
  if (first.alert) {
    const below = rows.filter((r) => r.belowSince !== undefined);
    const rule = `alert below ${threshold(first.alert.below)} for ${forText(first.alert.forMs)}`;
    parts.push(
      below.length === 0
        ? `${rule}: not below`
        : `${rule}: below in ${below
            .map((r) => {
              const firing = now - (r.belowSince as number) >= (r.alert?.forMs ?? Number.POSITIVE_INFINITY);
              return `${r.org} since ${formatWhen(r.belowSince as number, now)}${firing ? ' (firing)' : ''}`;
            })
            .join(', ')}`,
    );
  }
  const unresolved = rows.filter((r) => r.target === null).map((r) => r.org);
  if (unresolved.length)
    parts.push(
      `target ${first.targetText} not resolved in ${unresolved.join(', ')} (no rollout of the policy yet): its Collectors count as unknown`,
    );
  return parts.length ? `${first.policy}: ${parts.join('; ')}` : undefined;
}

function policyTable(view: FleetView, now: number, format: FleetFormat): string[] {
  if (view.policies.length === 0) return [];
  const width = format.width ?? 80;
  // UNKNOWN only when some policy has Collectors of unknown build (or an unresolved target).
  const unknown = view.policies.some((r) => r.counts.unknown > 0);
  const header = [
    'POLICY',
    'ORG',
    'TARGET',
    'COUNT',
    'ON TARGET',
    'BEHIND',
    ...(unknown ? ['UNKNOWN'] : []),
    'MINIMUM',
  ];
  const rows = view.policies.map((r) => {
    const c = r.counts;
    return [
      r.policy,
      r.org,
      r.target ?? '-',
      count(c.selected),
      r.target === null ? '-' : percent(c.compliant, c.selected),
      r.target === null ? '-' : percent(c.behind, c.selected),
      ...(unknown ? [percent(c.unknown, c.selected)] : []),
      c.minimum === undefined ? '-' : percent(c.minimum, c.selected),
    ];
  });
  if (!format.wide) {
    // The policy's name gives way: cut (with …) to what 80 columns leave it.
    const others = [header, ...rows].reduce(
      (w, row) => row.slice(1).map((cell, i) => Math.max(w[i] ?? 0, cell.length)),
      [] as number[],
    );
    const room = Math.max(8, width - others.reduce((n, w) => n + w + 2, 0));
    for (const row of rows)
      if ((row[0] as string).length > room) row[0] = `${(row[0] as string).slice(0, room - 1)}…`;
    // Still too wide (long organization names): the organization gives way too, down to 8
    // (`--wide` or `--org NAME` show it whole).
    const policyWidth = Math.max('POLICY'.length, ...rows.map((r) => (r[0] as string).length));
    const orgRoom = Math.max(8, width - policyWidth - 2 - others.slice(1).reduce((n, w) => n + w + 2, 0));
    for (const row of rows)
      if ((row[1] as string).length > orgRoom) row[1] = `${(row[1] as string).slice(0, orgRoom - 1)}…`;
  }
  const lines = align([header, ...rows], 3);
  const byPolicy = new Map<string, PolicyRow[]>();
  for (const r of view.policies) byPolicy.set(r.policy, [...(byPolicy.get(r.policy) ?? []), r]);
  for (const rows of byPolicy.values()) {
    const note = policyNote(rows, now);
    if (note) lines.push(...wrapText(note, format.wide ? Number.POSITIVE_INFINITY : width, '  ', '    '));
  }
  return lines;
}

/** The table of `fleet`. */
export function formatFleet(view: FleetView, now: number, format: FleetFormat = {}): string {
  const width = Math.max(40, format.width ?? 80);
  const wrapWidth = format.wide ? Number.POSITIVE_INFINITY : width;
  const out = [totals(view), ...passLines(view, now, wrapWidth), ''];
  out.push(...buildTable(view, format));
  const oldest = oldestLine(view, wrapWidth);
  if (oldest.length) out.push('', ...oldest);
  out.push(...firstSeenLine(view, now, wrapWidth));
  const policies = policyTable(view, now, { ...format, width });
  if (policies.length) out.push('', ...policies);
  return out.join('\n');
}

/** The CSV columns of `fleet --format csv`. */
export const FLEET_CSV_COLUMNS = [
  'org',
  'policy',
  'build',
  'collectors',
  'alive',
  'offline',
  'target',
  'status',
  'minimum',
] as const;

function csvCell(value: string | number): string {
  const text = String(value);
  return /[",\n\r]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * `fleet --format csv`: a row per organization and build (policy empty: the whole fleet there),
 * then a row per policy, organization and build of its Collectors, with the build its target
 * resolves to, `status` (compliant, behind or unknown) and `minimum` (yes or no when the policy
 * sets minimumBuild). Sums of `collectors` by `status` give the shares of the table.
 */
export function fleetCsv(view: FleetView): string {
  const lines = [FLEET_CSV_COLUMNS.join(',')];
  for (const o of view.orgs)
    for (const b of o.builds)
      lines.push([o.org, '', b.build, b.collectors, b.alive, b.offline, '', '', ''].map(csvCell).join(','));
  for (const r of view.policies) {
    const builds = Object.entries(r.builds).sort(([a], [b]) => compareBuildsNewestFirst(a, b));
    for (const [build, [alive, offline]] of builds) {
      const status = statusOf(build, r);
      const minimum = r.minimumBuild === undefined ? '' : atLeast(build, r.minimumBuild) ? 'yes' : 'no';
      lines.push(
        [r.org, r.policy, build, alive + offline, alive, offline, r.target ?? '', status, minimum]
          .map(csvCell)
          .join(','),
      );
    }
  }
  return lines.join('\n');
}

function atLeast(build: string, than: string): boolean {
  return isBuildVersion(build) && isBuildVersion(than) && compareBuildVersions(build, than) >= 0;
}

function statusOf(build: string, r: PolicyRow): 'compliant' | 'behind' | 'unknown' {
  if (r.target === null || !isBuildVersion(build)) return 'unknown';
  return atLeast(build, r.target) ? 'compliant' : 'behind';
}
