/**
 * The organizations' lines of `status`: under a rollout's row, one line per organization whose
 * part is not done (its name, the build it goes to there, a bar with done/total, its Collectors
 * in flight, and why it waits: its service's problem, or an operator's pause of that part), and,
 * above the table, one line per organization whose service has a problem, saying what ends it.
 * A rollout of the one organization `default` has no organization lines: its row says it all.
 * Text from outside goes through `oneLine`.
 */
import type { FleetStatus, OrgPartStatus, RolloutStatus } from '../../rollout/index.js';
import { DEFAULT_ORG } from '../../rollout/index.js';
import { formatWhen, oneLine } from './explain-rollout.js';

export type OrgProblemView = FleetStatus['orgProblems'][number];

const cmd = (text: string) => `\`fleet-upgrade ${text}\``;

/** Whether a rollout's row is broken down by organization (more than one, or one not `default`). */
export function hasOrgParts(r: Pick<RolloutStatus, 'byOrg'>): boolean {
  const parts = r.byOrg ?? [];
  return parts.length > 1 || (parts.length === 1 && parts[0]?.org !== DEFAULT_ORG);
}

/** Whether an organization's part still has work or waits (else its line is left out). */
export function partNotDone(r: RolloutStatus, part: OrgPartStatus): boolean {
  return (
    part.done < part.total ||
    part.waiting !== undefined ||
    (r.pausedOrgs ?? []).some((p) => p.org === part.org)
  );
}

/** Why an organization's part waits, in words (undefined when it does not): its problem, or a pause. */
export function partWaits(
  r: RolloutStatus,
  part: OrgPartStatus,
  now: number,
  problems: ReadonlyMap<string, OrgProblemView>,
): string | undefined {
  const waits: string[] = [];
  const problem = problems.get(part.org);
  if (problem) waits.push(`${oneLine(problem.reason)} since ${formatWhen(problem.since, now)}`);
  else if (part.waiting) waits.push(oneLine(part.waiting.replace(/^org \S+: /, '')));
  const paused = (r.pausedOrgs ?? []).find((p) => p.org === part.org);
  if (paused)
    waits.push(
      `paused by ${oneLine(paused.by)} at ${formatWhen(paused.at, now)} — ${cmd(`resume ${oneLine(r.id)} --org ${part.org}`)} lets it go on`,
    );
  return waits.length ? waits.join('; ') : undefined;
}

/** The cells of an organization's line before what it says: `org emea`, build, bar with done/total. */
function partCells(part: OrgPartStatus, bar: (done: number, total: number) => string): string[] {
  // None found yet (its listing waits for its service): an empty bar, not a full one.
  const progress =
    part.total === 0 && part.waiting !== undefined
      ? bar(0, 1).replace(/ 0\/1$/, ' 0/0')
      : bar(part.done, part.total);
  return [`org ${oneLine(part.org)}`, oneLine(part.build), progress];
}

/**
 * The lines under a rollout's row: one per organization not done (or only `focus`, done or
 * not), cells aligned across them, then its Collectors in flight and why it waits, broken at
 * `width` when that does not fit.
 */
export function orgPartLines(
  r: RolloutStatus,
  options: {
    now: number;
    width: number;
    problems: ReadonlyMap<string, OrgProblemView>;
    bar: (done: number, total: number) => string;
    focus?: string;
  },
): string[] {
  if (!hasOrgParts(r) && options.focus === undefined) return [];
  const parts = (r.byOrg ?? []).filter((p) =>
    options.focus === undefined ? partNotDone(r, p) : p.org === options.focus,
  );
  if (parts.length === 0) return [];
  const rows = parts.map((p) => partCells(p, options.bar));
  const widths = (rows[0] ?? []).map((_, i) => Math.max(...rows.map((row) => (row[i] ?? '').length)));
  return parts.flatMap((part, i) => {
    const head = `  ${(rows[i] ?? []).map((cell, c) => cell.padEnd(widths[c] as number)).join('  ')}`;
    const flight = part.inflight > 0 ? `${part.inflight} in flight` : '';
    const waits = partWaits(r, part, options.now, options.problems);
    const whole = [flight, waits].filter(Boolean).join('; ');
    if (!whole) return [head.trimEnd()];
    // On the line when it fits; else why it waits goes below, indented.
    if (head.length + 2 + whole.length <= options.width) return [`${head}  ${whole}`];
    const first = flight && head.length + 2 + flight.length <= options.width ? `${head}  ${flight}` : head;
    return [first.trimEnd(), ...(waits ? breakAfter('    ', waits, options.width, '      ') : [])];
  });
}

/**
 * `head` then `text` on one line when it fits `width`; else as many of its words as fit after
 * `head`, the rest on lines indented by `hanging` (a command in backticks is never broken).
 */
export function breakAfter(head: string, text: string, width: number, hanging = '      '): string[] {
  const words = text.match(/`[^`]*`\S*|\S+/g) ?? [];
  const lines: string[] = [];
  let line = head;
  let empty = head.trim() === '';
  for (const word of words) {
    const next = empty ? line + word : `${line} ${word}`;
    if (!empty && next.length > width) {
      lines.push(line.trimEnd());
      line = hanging + word;
    } else line = next;
    empty = false;
  }
  lines.push(line.trimEnd());
  return lines;
}

/** What ends an organization's problem, in words (`org` DEFAULT_ORG: the one of SUMOLOGIC_*). */
export function orgProblemRemedy(p: Pick<OrgProblemView, 'kind' | 'reason'> & { org?: string }): string {
  const its = p.org === DEFAULT_ORG ? 'the' : 'its';
  const where =
    p.org === DEFAULT_ORG
      ? 'SUMOLOGIC_ACCESSKEY or SUMOLOGIC_ACCESSKEY_FILE, or api.accessKeyFile in the settings file'
      : 'the file or variable its settings name';
  if (p.kind === 'credentials')
    return /may not manage/.test(p.reason)
      ? `give ${its} API user the right to manage Collectors at the service: it goes on by itself at the next probe`
      : `fix ${its} access key (${where}, then restart \`run\` and the workers) or ${its} API user at the service: it goes on by itself once the service accepts the key`;
  return 'it goes on by itself when its service recovers (probed with a growing back-off, at most 5 min apart)';
}

/**
 * One sentence per organization whose service has a problem: since when, that its part of every
 * rollout waits, and what ends it. Unbroken (`width` undefined) or wrapped at `width`.
 */
export function orgProblemLines(problems: readonly OrgProblemView[], now: number, width?: number): string[] {
  return problems.flatMap((p) => {
    // The one organization of a deployment without `orgs`: nothing else goes on.
    const text =
      p.org === DEFAULT_ORG
        ? `the service: ${oneLine(p.reason)} since ${formatWhen(p.since, now)}; nothing moves until it answers — ${orgProblemRemedy(p)}`
        : `org ${oneLine(p.org)}: ${oneLine(p.reason)} since ${formatWhen(p.since, now)}; its part of every rollout waits, the other organizations go on — ${orgProblemRemedy(p)}`;
    return width === undefined ? [text] : breakAfter('', text, width, '  ');
  });
}
