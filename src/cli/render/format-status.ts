/**
 * Text renderings of rollouts for `status`, `run --once` and `status --watch`. `formatStatus`
 * is what `status` prints: by default a table that fits 80 columns (rollout, phase, a short
 * progress bar with done/total, in-flight/limit, the non-zero states as `12 ok 1 failed`) with
 * one sentence under a rollout's row saying what it waits for (explain-rollout.ts); with several
 * organizations, a line per organization not done under the row and a line per organization with
 * a problem above the table (org-part-lines.ts); `wide` gives `formatRolloutTable`, a column per
 * state. Text from outside goes through `sanitize`.
 */

import type { OneOffView, RolloutStatus, TargetWait } from '../../rollout/index.js';
import { countsByMetricState, METRIC_STATES, STATE_LABELS } from '../../rollout/index.js';
import { type DaemonProblemView, daemonProblemLines } from './daemon-problem-lines.js';
import { explainRollout, oneLine } from './explain-rollout.js';
import { oneOffLines } from './one-off-lines.js';
import {
  hasOrgParts,
  type OrgProblemView,
  orgPartLines,
  orgProblemLines,
  partNotDone,
  partWaits,
} from './org-part-lines.js';
import { targetWaitLines } from './target-wait-lines.js';

export { countsByMetricState };

export function progressBar(done: number, total: number, width = 20): string {
  const share = total === 0 ? 1 : done / total;
  const full = Math.round(share * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${(share * 100).toFixed(0).padStart(3)}%`;
}

/** One column per state as metrics show them (collector-state.ts), in that order. */
const COLUMNS = METRIC_STATES;

/** Lines of cells, each column as wide as its widest cell, two spaces apart, no trailing space. */
function alignRows(rows: readonly string[][]): string[] {
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return rows.map((cells) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] as number))
      .join('  ')
      .trimEnd(),
  );
}

const haltNote = (r: RolloutStatus) =>
  r.phase === 'halted' && r.haltReason ? `${oneLine(r.id)} halted: ${oneLine(r.haltReason)}` : undefined;

/**
 * The full table (`status --wide`, `run --once`): a column per state. `note` gives the lines
 * below it (default: the reasons of halted rollouts); `subRows` rows of cells under a rollout's
 * row (`status --wide`: its organizations').
 */
export function formatRolloutTable(
  rollouts: readonly RolloutStatus[],
  note: (r: RolloutStatus) => string | undefined = haltNote,
  subRows: (r: RolloutStatus) => string[][] = () => [],
): string {
  if (rollouts.length === 0) return 'no rollouts';
  const header = ['ROLLOUT', 'PHASE', 'PROGRESS', 'IN-FLIGHT', ...COLUMNS.map((c) => c.toUpperCase())];
  const rows = rollouts.flatMap((r) => {
    const c = countsByMetricState(r.counts);
    const row = [
      oneLine(r.id),
      oneLine(r.phaseText),
      `${progressBar(r.done, r.total)} ${r.done}/${r.total}`,
      `${r.inflight}/${r.maxInFlight}`,
      ...COLUMNS.map((k) => String(c[k] ?? 0)),
    ];
    return [row, ...subRows(r)];
  });
  const notes = rollouts.map(note).filter((n): n is string => n !== undefined);
  return [...alignRows([header, ...rows]), ...notes].join('\n');
}

/** The states of the narrow table, in this order, with their short names: the state table's `label` column. */
export { STATE_LABELS };

/** `12 ok 1 failed 3 retrying`: the non-zero states (in-flight ones are in their own column). */
export function stateSummary(counts: Readonly<Record<string, number>>): string[] {
  const c = countsByMetricState(counts);
  return STATE_LABELS.filter(([s]) => c[s] > 0).map(([s, label]) => `${c[s]} ${label}`);
}

/** As many whole parts as fit in `width` (joined by spaces), and the parts left over. */
export function fitParts(parts: readonly string[], width: number): { text: string; rest: string[] } {
  let text = '';
  for (const [i, part] of parts.entries()) {
    const next = text ? `${text} ${part}` : part;
    if (next.length > width) return { text, rest: parts.slice(i) };
    text = next;
  }
  return { text, rest: [] };
}

/**
 * `parts` (each a count with its state, `17 quarantined`) on lines of at most `width` columns
 * after a two-space indent, a part never broken: a count stays with its state (issue #26).
 */
export function partLines(parts: readonly string[], width: number): string[] {
  const lines: string[] = [];
  let rest = [...parts];
  while (rest.length) {
    const fit = fitParts(rest, width - (lines.length ? 4 : 2));
    // A part longer than the line stands alone.
    const text = fit.text || (rest[0] as string);
    lines.push(`${lines.length ? '    ' : '  '}${text}`);
    rest = fit.text ? fit.rest : rest.slice(1);
  }
  return lines;
}

/** A rollout id cut to `width`: the policy's name is shortened, its build kept (`linux-pro…@19.470-4`). */
export function shortId(id: string, width: number): string {
  if (id.length <= width) return id;
  const at = id.lastIndexOf('@');
  const build = at > 0 ? id.slice(at) : '';
  if (build && build.length <= width - 4) return `${id.slice(0, width - build.length - 1)}…${build}`;
  return `${id.slice(0, width - 1)}…`;
}

/** `[####......] 40/100`: a bar of `width` cells and the counts. */
export function shortProgress(done: number, total: number, width = 8): string {
  const full = Math.round((total === 0 ? 1 : done / total) * width);
  return `[${'#'.repeat(full)}${'.'.repeat(width - full)}] ${done}/${total}`;
}

/**
 * `text` broken at spaces into lines of at most `width` columns (a word longer than that stands
 * alone); a span in backticks (a command) is never broken.
 */
export function wrapText(text: string, width: number, indent = '  ', hanging = '    '): string[] {
  const words = text.match(/`[^`]*`\S*|\S+/g) ?? [];
  const lines: string[] = [];
  let line = indent;
  for (const word of words) {
    const fresh = line.trim() === '';
    if (!fresh && line.length + 1 + word.length > width) {
      lines.push(line);
      line = hanging + word;
    } else line = fresh ? line + word : `${line} ${word}`;
  }
  if (line.trim()) lines.push(line);
  return lines;
}

export interface StatusView {
  rollouts: readonly RolloutStatus[];
  /** The deployment's clock now (for `baking until 14:32 UTC`). */
  now: number;
  /** Whether a scheduler leads; false adds a sentence that nothing moves (undefined: unknown). */
  daemonRunning?: boolean;
  /** Organizations whose service has a problem: a line each above the table (default none). */
  orgProblems?: readonly OrgProblemView[];
  /** One-offs without a rollout: a sentence each above the table, saying what holds it (default none). */
  oneOffs?: readonly OneOffView[];
  /** The daemon's own problems: a sentence each above the table, with what ends it (default none). */
  daemonProblems?: readonly DaemonProblemView[];
  /** Policies whose newest build waits to start (minAge, a ring): a sentence each above the table (default none). */
  targetWaits?: readonly TargetWait[];
  /**
   * The deployment clock's time scale: a rehearsal's (above 1) is named in a first line, so that
   * its times are not read as the wall clock's (default 1: nothing said).
   */
  timeScale?: number;
  /** `status --org NAME`: under each row, this organization's line, done or not. */
  focusOrg?: string;
}

export interface StatusFormat {
  /** A column per state, lines as long as they need (default false). */
  wide?: boolean;
  /** Columns of the narrow table (default 80). */
  width?: number;
}

/** `simulated clock, ×60` for a rehearsal's clock, `wall clock` for production's. */
export function clockName(timeScale = 1): string {
  return timeScale === 1 ? 'wall clock' : `simulated clock, ×${timeScale}`;
}

/** A rehearsal's first line: every time of the screen is on its simulated clock (undefined at scale 1). */
export function clockNote(timeScale: number | undefined, now: number): string | undefined {
  if (timeScale === undefined || timeScale === 1) return undefined;
  const at = new Date(now).toISOString().slice(0, 16).replace('T', ' ');
  return `Simulated clock (×${timeScale}): now ${at} UTC; every time below is on it.`;
}

export const NO_DAEMON =
  'No daemon is running: no `fleet-upgrade run` leads these rollouts, so nothing moves until one starts.';

/** What `status` prints (without `--json`). */
export function formatStatus(view: StatusView, format: StatusFormat = {}): string {
  const width = Math.max(40, format.width ?? 80);
  const problems = view.orgProblems ?? [];
  const clock = clockNote(view.timeScale, view.now);
  // Nothing moves without a daemon: said first, then which clock the screen's times are on.
  const head = [
    ...(view.daemonRunning === false && view.rollouts.length > 0
      ? format.wide
        ? [NO_DAEMON]
        : wrapText(NO_DAEMON, width, '', '')
      : []),
    ...(clock === undefined ? [] : [clock]),
    ...daemonProblemLines(view.daemonProblems ?? [], view.now, format.wide ? undefined : width),
    ...orgProblemLines(problems, view.now, format.wide ? undefined : width),
    ...oneOffLines(view.oneOffs ?? [], view.now, (t) => (format.wide ? [t] : wrapText(t, width, '', '  '))),
    ...targetWaitLines(view.targetWaits ?? [], view.now, (t) =>
      format.wide ? [t] : wrapText(t, width, '', '  '),
    ),
  ];
  const explain = (r: RolloutStatus) => explainRollout(r, view.now);
  const byOrg = new Map(problems.map((p) => [p.org, p]));
  if (format.wide) {
    const table = formatRolloutTable(
      view.rollouts,
      (r) => {
        const text = explain(r);
        const notes = [
          ...(text === undefined ? [] : [`${oneLine(r.id)}: ${text}`]),
          ...wideOrgParts(r, view.focusOrg).flatMap((p) => {
            const waits = partWaits(r, p, view.now, byOrg);
            return waits ? [`${oneLine(r.id)} org ${oneLine(p.org)}: ${waits}`] : [];
          }),
        ];
        return notes.length ? notes.join('\n') : undefined;
      },
      (r) => wideOrgParts(r, view.focusOrg).map((p) => wideOrgRow(r, p, byOrg)),
    );
    return [...head, table].join('\n');
  }
  const orgLines = (r: RolloutStatus) =>
    orgPartLines(r, {
      now: view.now,
      width,
      problems: byOrg,
      bar: shortProgress,
      ...(view.focusOrg === undefined ? {} : { focus: view.focusOrg }),
    });
  return [...head, formatNarrowTable(view.rollouts, explain, width, orgLines)].join('\n');
}

/** The organizations of a rollout that `--wide` gives a row: those not done, or only `focus`. */
function wideOrgParts(r: RolloutStatus, focus: string | undefined) {
  const parts = r.byOrg ?? [];
  if (focus !== undefined) return parts.filter((p) => p.org === focus);
  return hasOrgParts(r) ? parts.filter((p) => partNotDone(r, p)) : [];
}

function wideOrgRow(
  r: RolloutStatus,
  p: RolloutStatus['byOrg'][number],
  problems: Parameters<typeof partWaits>[3],
): string[] {
  const c = countsByMetricState(p.counts);
  const paused = (r.pausedOrgs ?? []).some((o) => o.org === p.org);
  return [
    `  org ${oneLine(p.org)} (${oneLine(p.build)})`,
    problems.has(p.org) || p.waiting ? 'waiting' : paused ? 'paused' : '',
    `${progressBar(p.done, p.total)} ${p.done}/${p.total}`,
    String(p.inflight),
    ...COLUMNS.map((k) => String(c[k] ?? 0)),
  ];
}

function formatNarrowTable(
  rollouts: readonly RolloutStatus[],
  explain: (r: RolloutStatus) => string | undefined,
  width: number,
  orgLines: (r: RolloutStatus) => string[],
): string {
  if (rollouts.length === 0) return 'no rollouts';
  const header = ['ROLLOUT', 'PHASE', 'PROGRESS', 'IN-FLIGHT', 'STATES'];
  const phases = rollouts.map((r) => r.phase as string);
  const flights = rollouts.map((r) => `${r.inflight}/${r.maxInFlight}`);
  const colWidth = (cells: string[], title: string) => Math.max(title.length, ...cells.map((c) => c.length));
  const wPhase = colWidth(phases, 'PHASE');
  const wFlight = colWidth(flights, 'IN-FLIGHT');
  const ids = rollouts.map((r) => oneLine(r.id));
  const progress = rollouts.map((r) => shortProgress(r.done, r.total));
  const fixed = wPhase + colWidth(progress, 'PROGRESS') + wFlight + 4 * 2;
  // The id is cut before STATES gets fewer than 16 columns; states that do not fit go below.
  const wId = Math.min(colWidth(ids, 'ROLLOUT'), Math.max(12, width - fixed - 16));
  const statesWidth = Math.max(6, width - fixed - wId);
  const rows: string[][] = [header];
  const below: string[][] = [];
  rollouts.forEach((r, i) => {
    const id = ids[i] as string;
    const cut = shortId(id, wId);
    const states = fitParts(stateSummary(r.counts), statesWidth);
    rows.push([cut, phases[i] as string, progress[i] as string, flights[i] as string, states.text]);
    const lines: string[] = [];
    // Queued Collectors are the rest of the bar: named only when they fit.
    const rest = states.rest.filter((part) => !part.endsWith(' queued'));
    if (rest.length) lines.push(...partLines(['also', ...rest], width));
    lines.push(...orgLines(r));
    // A cut id is given whole below its row, so that it can be copied into a command.
    const text = explain(r);
    const note = cut === id || text?.includes(id) ? text : text ? `${id}: ${text}` : id;
    if (note) lines.push(...wrapText(note, width));
    below.push(lines);
  });
  const lines = alignRows(rows);
  return [lines[0] as string, ...lines.slice(1).flatMap((line, i) => [line, ...(below[i] ?? [])])].join('\n');
}
