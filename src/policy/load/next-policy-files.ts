/**
 * The pure state transition of the policy store: from the files as they were and the texts just
 * read, the new state of every file and the changes to report. No I/O, so that every rule below
 * is testable through the store with plain files and no timing.
 *
 * Each file is in one of three states:
 *   valid                       its policy is in force;
 *   invalid-keeping-last-valid  the file turned invalid: its last valid policy stays in force;
 *   invalid                     never valid since it appeared: reported, not loaded.
 * A file that is no longer read is gone, and so is its policy. One name, one file: the file that
 * held a name keeps it, otherwise the first claimant in file order gets it; a loser is invalid
 * (keeping its own last valid policy when it had one under another name). Policies whose `after`
 * form a cycle are invalid too: those edited or added this round (the others of the cycle stay in
 * force), each keeping its last valid policy when that one is out of the cycle.
 */
import { ConfigError, formatIssue } from '../../lib/errors.js';
import type { Policy } from '../schema.js';
import { ringCycleIssues } from './check-rings.js';
import {
  duplicateNameIssue,
  type LoadedPolicy,
  type PolicyFileResult,
  parsePolicyText,
} from './load-policies.js';

export type PolicyFileState = 'valid' | 'invalid-keeping-last-valid' | 'invalid';

export type PolicyStoreEvent =
  | { type: 'added'; file: string; policy: Policy }
  | { type: 'updated'; file: string; policy: Policy; previous: Policy }
  /** A file that was invalid is valid again (its policy may or may not differ from the kept one). */
  | { type: 'recovered'; file: string; policy: Policy; previous: Policy }
  | { type: 'removed'; file: string; policy: Policy }
  /** The file cannot be used; `keeping` is the last valid policy still in force, if any. */
  | { type: 'invalid'; file: string; error: ConfigError; keeping?: Policy }
  /** The folder cannot be listed; every policy stays as it was. */
  | { type: 'folder-error'; error: ConfigError };

export interface PolicyFileEntry {
  text: string | undefined;
  parsed: PolicyFileResult;
  state: PolicyFileState;
  /** The policy in force from this file. */
  effective?: LoadedPolicy;
  error?: ConfigError;
}

/** What was read of one file: its text, or why it could not be read. */
export type FileRead = { text: string } | { error: ConfigError };

function entryFor(file: string, read: FileRead, before: PolicyFileEntry | undefined): PolicyFileEntry {
  const text = 'text' in read ? read.text : undefined;
  // An unchanged text keeps its parse: the same policy object, so compiled selections stay cached.
  const parsed =
    before && text !== undefined && before.text === text
      ? before.parsed
      : 'error' in read
        ? ({ ok: false, file, error: read.error } as const)
        : parsePolicyText(file, read.text);
  if (parsed.ok) return { text, parsed, state: 'valid', effective: parsed.loaded };
  const kept = before?.effective;
  if (kept)
    return { text, parsed, state: 'invalid-keeping-last-valid', effective: kept, error: parsed.error };
  return { text, parsed, state: 'invalid', error: parsed.error };
}

function resolveNames(
  next: Map<string, PolicyFileEntry>,
  before: ReadonlyMap<string, PolicyFileEntry>,
): void {
  for (let changed = true; changed; ) {
    changed = false;
    const claims = new Map<string, string[]>();
    for (const [file, e] of next) {
      const name = e.effective?.policy.name;
      if (name !== undefined) claims.set(name, [...(claims.get(name) ?? []), file]);
    }
    for (const [name, claimants] of claims) {
      if (claimants.length < 2) continue;
      const winner = claimants.find((f) => before.get(f)?.effective?.policy.name === name) ?? claimants[0];
      for (const loser of claimants.filter((f) => f !== winner)) {
        const e = next.get(loser) as PolicyFileEntry;
        const issue = duplicateNameIssue(e.effective as LoadedPolicy, winner as string);
        const kept = before.get(loser)?.effective;
        const fallback = kept && kept.policy.name !== name ? kept : undefined;
        next.set(loser, {
          text: e.text,
          parsed: e.parsed,
          state: fallback ? 'invalid-keeping-last-valid' : 'invalid',
          ...(fallback && { effective: fallback }),
          error: new ConfigError(formatIssue(issue), [issue]),
        });
        changed = true;
      }
    }
  }
}

/** Files whose policies form a cycle of rings (check-rings.ts) turn invalid, as a loser of a name does. */
function refuseRingCycles(
  next: Map<string, PolicyFileEntry>,
  before: ReadonlyMap<string, PolicyFileEntry>,
): void {
  for (let round = 0; round <= next.size; round++) {
    const effective = [...next.values()].flatMap((e) => (e.effective ? [e.effective] : []));
    const cycles = ringCycleIssues(effective);
    if (cycles.length === 0) return;
    // The files edited (or added) this round close the cycle: they are refused, the others stay.
    const changed = cycles.filter((c) => before.get(c.loaded.file)?.effective !== c.loaded);
    for (const { loaded, issue } of changed.length ? changed : cycles) {
      const e = next.get(loaded.file) as PolicyFileEntry;
      const kept = before.get(loaded.file)?.effective;
      // Its last valid policy, unless that is the one in the cycle.
      const fallback =
        kept && kept !== loaded && kept.policy.after?.policy !== loaded.policy.after?.policy
          ? kept
          : undefined;
      next.set(loaded.file, {
        text: e.text,
        parsed: e.parsed,
        state: fallback ? 'invalid-keeping-last-valid' : 'invalid',
        ...(fallback && { effective: fallback }),
        error: new ConfigError(formatIssue(issue), [issue]),
      });
    }
  }
}

const samePolicy = (a: Policy, b: Policy) => a === b || JSON.stringify(a) === JSON.stringify(b);

function diff(
  before: ReadonlyMap<string, PolicyFileEntry>,
  after: ReadonlyMap<string, PolicyFileEntry>,
): PolicyStoreEvent[] {
  const events: PolicyStoreEvent[] = [];
  for (const [file, old] of before) {
    if (!after.has(file) && old.effective)
      events.push({ type: 'removed', file, policy: old.effective.policy });
  }
  for (const [file, now] of after) {
    const old = before.get(file);
    const previous = old?.effective?.policy;
    if (now.state !== 'valid') {
      if (old?.error?.message !== now.error?.message || old?.state !== now.state) {
        const keeping = now.effective?.policy;
        events.push({ type: 'invalid', file, error: now.error as ConfigError, ...(keeping && { keeping }) });
      }
      if (previous && !now.effective) events.push({ type: 'removed', file, policy: previous });
      continue;
    }
    const policy = (now.effective as LoadedPolicy).policy;
    if (!previous) events.push({ type: 'added', file, policy });
    else if (old?.state !== 'valid') events.push({ type: 'recovered', file, policy, previous });
    else if (!samePolicy(previous, policy)) events.push({ type: 'updated', file, policy, previous });
  }
  return events;
}

/** The new state of every file read (in file order) and the changes from `before`. */
export function nextPolicyFiles(
  before: ReadonlyMap<string, PolicyFileEntry>,
  reads: ReadonlyMap<string, FileRead>,
): { entries: Map<string, PolicyFileEntry>; events: PolicyStoreEvent[] } {
  const entries = new Map<string, PolicyFileEntry>();
  for (const [file, read] of reads) entries.set(file, entryFor(file, read, before.get(file)));
  resolveNames(entries, before);
  refuseRingCycles(entries, before);
  return { entries, events: diff(before, entries) };
}
