/**
 * A running view of the policy folder (or of explicit files) that follows edits while the daemon
 * runs. It polls: every `pollIntervalMs` it re-reads the files and, when any text changed, works
 * out the new state (next-policy-files.ts: which policy is in force from each file, and what
 * changed). Polling, not fs.watch, because it sees atomic renames by editors, Kubernetes
 * ConfigMap symlink swaps and network file systems alike, and a few small files cost nothing.
 *
 * A file that turns invalid keeps its last valid policy (state `invalid-keeping-last-valid`) and
 * is reported; a new invalid file is reported and not loaded; a deleted file takes its policy
 * away; a folder that cannot be read keeps everything as it was. The first load is strict: any
 * invalid file makes createPolicyStore throw, so that the daemon refuses to start.
 *
 * A file is only ever its own problem: reading and parsing never throw (a file that cannot even
 * be parsed, or is too large, is `invalid` like any other), and a listener that throws is told to
 * `onError` without stopping the other listeners or later reloads. policy-problems.ts turns the
 * files' states into the `/readyz` answer.
 */
import { createHash } from 'node:crypto';
import { ConfigError, formatIssue } from '../../lib/errors.js';
import type { Policy } from '../schema.js';
import { DEFAULT_POLICY_DIR, type LoadedPolicy, listPolicyFiles, readPolicyText } from './load-policies.js';
import {
  type FileRead,
  nextPolicyFiles,
  type PolicyFileEntry,
  type PolicyFileState,
  type PolicyStoreEvent,
} from './next-policy-files.js';

export type { PolicyFileState, PolicyStoreEvent };

export interface PolicyFileStatus {
  file: string;
  state: PolicyFileState;
  /** The policy in force from this file (absent when `invalid`). */
  policy?: Policy;
  /** Why the file cannot be used: file:line:column: field: reason, one per line. */
  error?: string;
}

export interface PolicyStoreOptions {
  /** Folder to follow; default `config/policies`. Ignored when `files` is given. */
  dir?: string;
  /** Explicit files to follow instead of a folder. */
  files?: readonly string[];
  /** How often `start()` re-reads the files. Default 2000 ms. */
  pollIntervalMs?: number;
  /** Told of every change, including the first load's `added` events. */
  onEvent?: (event: PolicyStoreEvent) => void;
  /** Told when an `onEvent` listener or a polled reload throws. Default: ignored. */
  onError?: (error: unknown) => void;
  /**
   * Told of each file whose text changed after the first load (the audit trail): its SHA-256
   * digests before and after (`none`: it did not exist, or could not be read).
   */
  onFileChange?: (change: PolicyFileChange) => void;
}

/** A policy file's text changed: its digests before and after. */
export interface PolicyFileChange {
  file: string;
  oldDigest: string;
  newDigest: string;
}

const digestOf = (text: string | undefined) =>
  text === undefined ? 'none' : `sha256:${createHash('sha256').update(text, 'utf8').digest('hex')}`;

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

/** The file's text or why it cannot be read; undefined when it does not exist (any more). */
function readFile(file: string): FileRead | undefined {
  try {
    return readPolicyText(file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    const reason = `cannot be read: ${(err as Error).message}`;
    return { error: new ConfigError(`${file}: ${reason}`, [{ file, field: '', reason }]) };
  }
}

export function createPolicyStore(options: PolicyStoreOptions = {}): PolicyStore {
  const dir = options.dir ?? DEFAULT_POLICY_DIR;
  let entries = new Map<string, PolicyFileEntry>();
  let lastFolderError: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** After the first load: what changes from then on is a change (onFileChange). */
  let loaded = false;

  /** Re-reads the files and moves to the new state; returns the changes without reporting them. */
  function refresh(): PolicyStoreEvent[] {
    let files: string[];
    try {
      files = options.files ? [...new Set(options.files)] : listPolicyFiles(dir);
    } catch (err) {
      if (!(err instanceof ConfigError)) throw err;
      if (err.message === lastFolderError) return [];
      lastFolderError = err.message;
      return [{ type: 'folder-error', error: err }];
    }
    lastFolderError = undefined;
    const reads = new Map<string, FileRead>();
    for (const file of files) {
      const read = readFile(file);
      if (read) reads.set(file, read);
    }
    const unchanged =
      reads.size === entries.size &&
      [...reads].every(([file, read]) => 'text' in read && entries.get(file)?.text === read.text);
    if (unchanged) return [];
    if (loaded && options.onFileChange) {
      for (const file of new Set([...entries.keys(), ...reads.keys()])) {
        const before = entries.get(file)?.text;
        const read = reads.get(file);
        const after = read && 'text' in read ? read.text : undefined;
        if (before !== after)
          options.onFileChange({ file, oldDigest: digestOf(before), newDigest: digestOf(after) });
      }
    }
    loaded = true;
    const next = nextPolicyFiles(entries, reads);
    entries = next.entries;
    return next.events;
  }

  function reload(): PolicyStoreEvent[] {
    const events = refresh();
    for (const event of events) {
      try {
        options.onEvent?.(event);
      } catch (err) {
        options.onError?.(err);
      }
    }
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
