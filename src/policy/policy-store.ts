/**
 * A running view of the policy folder (or of explicit files) that follows edits while the daemon
 * runs. It polls: every `pollIntervalMs` it re-reads the files and, when any text changed, parses
 * them all again. Polling, not fs.watch, because it sees atomic renames by editors, Kubernetes
 * ConfigMap symlink swaps and network file systems alike, and a few small files cost nothing.
 *
 * Each file is in one of three states:
 *   valid                       its policy is in force;
 *   invalid-keeping-last-valid  the file turned invalid: its last valid policy stays in force
 *                               and the error is reported until the file is fixed;
 *   invalid                     never valid since it appeared: reported, not loaded.
 * A deleted file takes its policy away. When two files claim one name, the file that held it
 * keeps it and the other is invalid. A folder that cannot be read keeps everything as it was.
 * The first load is strict: any invalid file makes createPolicyStore throw (the daemon refuses
 * to start).
 */
import { readFileSync } from 'node:fs';
import { ConfigError, formatIssue } from '../lib/errors.js';
import {
  DEFAULT_POLICY_DIR,
  duplicateNameIssue,
  type LoadedPolicy,
  listPolicyFiles,
  type PolicyFileResult,
  parsePolicyText,
} from './load-policies.js';
import type { Policy } from './schema.js';

export type PolicyFileState = 'valid' | 'invalid-keeping-last-valid' | 'invalid';

export interface PolicyFileStatus {
  file: string;
  state: PolicyFileState;
  /** The policy in force from this file (absent when `invalid`). */
  policy?: Policy;
  /** Why the file cannot be used: file:line:column: field: reason, one per line. */
  error?: string;
}

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

export interface PolicyStoreOptions {
  /** Folder to follow; default `config/policies`. Ignored when `files` is given. */
  dir?: string;
  /** Explicit files to follow instead of a folder. */
  files?: readonly string[];
  /** How often `start()` re-reads the files. Default 2000 ms. */
  pollIntervalMs?: number;
  /** Told of every change, including the first load's `added` events. */
  onEvent?: (event: PolicyStoreEvent) => void;
  /** Told when a polled reload throws (e.g. an `onEvent` listener failed). Default: ignored. */
  onError?: (error: unknown) => void;
}

export interface PolicyStore {
  /** The policies in force, in file order. */
  policies(): LoadedPolicy[];
  /** The policy in force under `name`. */
  get(name: string): LoadedPolicy | undefined;
  /** Every file with its state, in file order. */
  status(): PolicyFileStatus[];
  /** Re-reads now; returns (and reports) the changes. */
  reload(): PolicyStoreEvent[];
  /** Starts polling every `pollIntervalMs`. */
  start(): void;
  /** Stops polling. */
  close(): void;
}

interface FileEntry {
  text: string | undefined;
  parsed: PolicyFileResult;
  state: PolicyFileState;
  effective?: LoadedPolicy;
  error?: ConfigError;
}

function readText(file: string): { text?: string; error?: ConfigError } {
  try {
    return { text: readFileSync(file, 'utf8') };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return {};
    const reason = `cannot be read: ${(err as Error).message}`;
    return { error: new ConfigError(`${file}: ${reason}`, [{ file, field: '', reason }]) };
  }
}

export function createPolicyStore(options: PolicyStoreOptions = {}): PolicyStore {
  const dir = options.dir ?? DEFAULT_POLICY_DIR;
  let entries = new Map<string, FileEntry>();
  let lastFolderError: string | undefined;
  let timer: NodeJS.Timeout | undefined;

  function listFiles(): string[] {
    return options.files ? [...new Set(options.files)] : listPolicyFiles(dir);
  }

  /** The parse of `file`, reused when its text did not change (same policy object, same compiled globs). */
  function parse(
    file: string,
    text: string | undefined,
    readError: ConfigError | undefined,
  ): PolicyFileResult {
    const before = entries.get(file);
    if (before && before.text === text && text !== undefined) return before.parsed;
    if (readError) return { ok: false, file, error: readError };
    return parsePolicyText(file, text ?? '');
  }

  function compute(files: string[], texts: Map<string, { text?: string; error?: ConfigError }>) {
    const next = new Map<string, FileEntry>();
    for (const file of files) {
      const read = texts.get(file);
      if (!read || (read.text === undefined && !read.error)) continue; // deleted
      const parsed = parse(file, read.text, read.error);
      const previous = entries.get(file)?.effective;
      const entry: FileEntry = parsed.ok
        ? { text: read.text, parsed, state: 'valid', effective: parsed.loaded }
        : previous
          ? {
              text: read.text,
              parsed,
              state: 'invalid-keeping-last-valid',
              effective: previous,
              error: parsed.error,
            }
          : { text: read.text, parsed, state: 'invalid', error: parsed.error };
      next.set(file, entry);
    }
    // One name, one file: the file that held a name keeps it, else the first file in order.
    for (let changed = true; changed; ) {
      changed = false;
      const claims = new Map<string, string[]>();
      for (const [file, e] of next) {
        if (e.effective)
          claims.set(e.effective.policy.name, [...(claims.get(e.effective.policy.name) ?? []), file]);
      }
      for (const [name, claimants] of claims) {
        if (claimants.length < 2) continue;
        const winner = claimants.find((f) => entries.get(f)?.effective?.policy.name === name) ?? claimants[0];
        for (const loser of claimants.filter((f) => f !== winner)) {
          const e = next.get(loser) as FileEntry;
          const issue = duplicateNameIssue(e.effective as LoadedPolicy, winner as string);
          const kept = entries.get(loser)?.effective;
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
    return next;
  }

  function diff(before: Map<string, FileEntry>, after: Map<string, FileEntry>): PolicyStoreEvent[] {
    const events: PolicyStoreEvent[] = [];
    for (const [file, old] of before) {
      if (!after.has(file) && old.effective)
        events.push({ type: 'removed', file, policy: old.effective.policy });
    }
    for (const [file, now] of after) {
      const old = before.get(file);
      if (now.state !== 'valid') {
        if (old?.error?.message !== now.error?.message || old?.state !== now.state) {
          const error = now.error as ConfigError;
          events.push({
            type: 'invalid',
            file,
            error,
            ...(now.effective && { keeping: now.effective.policy }),
          });
        }
        if (old?.effective && !now.effective)
          events.push({ type: 'removed', file, policy: old.effective.policy });
        continue;
      }
      const policy = (now.effective as LoadedPolicy).policy;
      if (!old?.effective) events.push({ type: 'added', file, policy });
      else if (old.state !== 'valid')
        events.push({ type: 'recovered', file, policy, previous: old.effective.policy });
      else if (old.effective !== now.effective)
        events.push({ type: 'updated', file, policy, previous: old.effective.policy });
    }
    return events;
  }

  /** Re-reads the files and moves to the new state; returns the changes without reporting them. */
  function refresh(): PolicyStoreEvent[] {
    let files: string[];
    try {
      files = listFiles();
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (err.message === lastFolderError) return [];
      lastFolderError = err.message;
      return [{ type: 'folder-error', error: err }];
    }
    lastFolderError = undefined;
    const texts = new Map(files.map((f) => [f, readText(f)] as const));
    const present = files.filter((f) => texts.get(f)?.text !== undefined || texts.get(f)?.error);
    const unchanged =
      present.length === entries.size &&
      present.every((f) => !texts.get(f)?.error && entries.get(f)?.text === texts.get(f)?.text);
    if (unchanged) return [];
    const next = compute(files, texts);
    const events = diff(entries, next);
    entries = next;
    return events;
  }

  function reload(): PolicyStoreEvent[] {
    const events = refresh();
    for (const event of events) options.onEvent?.(event);
    return events;
  }

  const store: PolicyStore = {
    policies: () => [...entries.values()].flatMap((e) => (e.effective ? [e.effective] : [])),
    get: (name) => store.policies().find((p) => p.policy.name === name),
    status: () =>
      [...entries].map(([file, e]) => ({
        file,
        state: e.state,
        ...(e.effective && { policy: e.effective.policy }),
        ...(e.error && { error: e.error.message }),
      })),
    reload,
    start() {
      if (timer) return;
      timer = setInterval(() => {
        try {
          reload();
        } catch (err) {
          options.onError?.(err);
        }
      }, options.pollIntervalMs ?? 2000);
      timer.unref();
    },
    close() {
      if (timer) clearInterval(timer);
      timer = undefined;
    },
  };

  // The first load is strict: the daemon does not start on a policy it cannot use.
  const initial = refresh();
  const folderError = initial.find((e) => e.type === 'folder-error');
  if (folderError) throw folderError.error;
  const issues = [...entries.values()].flatMap((e) => e.error?.issues ?? []);
  for (const file of options.files ?? []) {
    if (!entries.has(file)) issues.push({ file, field: '', reason: 'file not found' });
  }
  if (issues.length > 0) throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  for (const event of initial) options.onEvent?.(event);
  return store;
}
