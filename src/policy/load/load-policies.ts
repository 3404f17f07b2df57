/**
 * Loads rollout policies from a folder (config/policies by default: every `*.yaml` / `*.yml`
 * file, one policy per file, files starting with `.` ignored) or from explicit files. Nothing is
 * half-loaded: every problem of every file is collected, each naming file, line, field and
 * reason, and thrown as one ConfigError, so that the daemon refuses to start on a bad policy.
 *
 * Whatever a file holds, reading it ends in a policy or a ConfigError that names the file, never
 * in an exception, and costs time in proportion to its size: a file above MAX_POLICY_BYTES is
 * refused before it is parsed, anchors and aliases are refused (see ALIASES_REFUSED), and the
 * YAML reader bounds nesting and the problems it lists (lib/source/yaml-source.ts).
 */
import { closeSync, fstatSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, formatIssue, type SourceIssue } from '../../lib/errors.js';
import { locateField, parseSource } from '../../lib/source/yaml-source.js';
import { Policy } from '../schema.js';
import { ringCycleIssues } from './check-rings.js';

export const DEFAULT_POLICY_DIR = 'config/policies';
const POLICY_FILE = /^[^.].*\.ya?ml$/i;

/**
 * Largest policy file read, in bytes (256 KB). The example policies are 1 to 4 KB; a selection
 * listing 10,000 ids is about 110 KB. The bound keeps the time to read a file (and to check it on
 * every change, on the leader's event loop) in the tens of milliseconds to about a second.
 */
export const MAX_POLICY_BYTES = 256 * 1024;

/**
 * Why anchors and aliases are refused in policies: one policy per file needs no sharing, an alias
 * can stand for millions of values (a "billion laughs"), and an error inside an aliased value
 * would be reported at the anchor, far from the line that uses it.
 */
export const ALIASES_REFUSED =
  'anchors and aliases (&name, *name) are not allowed in a policy file: write the value out';

/** A valid policy and the file it came from. */
export interface LoadedPolicy {
  policy: Policy;
  file: string;
  /** The file's text, so that later errors (e.g. a duplicate name) can point at a line. */
  text: string;
}

export interface LoadPoliciesOptions {
  /** Folder to read; default `config/policies`. Ignored when `files` is given. */
  dir?: string;
  /** Explicit policy files (e.g. `run --policy FILE`), in this order. */
  files?: readonly string[];
}

/** The outcome of reading one file: a policy, or the reasons it cannot be used. */
export type PolicyFileResult =
  | { ok: true; loaded: LoadedPolicy }
  | { ok: false; file: string; error: ConfigError };

/** Policy files of `dir`, sorted by name; a missing or unreadable folder is a ConfigError. */
export function listPolicyFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch (err) {
    const reason =
      (err as NodeJS.ErrnoException).code === 'ENOENT'
        ? 'policy folder not found'
        : `policy folder cannot be read: ${(err as Error).message}`;
    throw new ConfigError(`${dir}: ${reason}`, [{ file: dir, field: '', reason }]);
  }
  return names
    .filter((n) => POLICY_FILE.test(n))
    .sort()
    .map((n) => join(dir, n));
}

const fileError = (file: string, reason: string) =>
  new ConfigError(`${file}: ${reason}`, [{ file, field: '', reason }]);

function readError(file: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code;
  return fileError(file, code === 'ENOENT' ? 'file not found' : `cannot be read: ${(err as Error).message}`);
}

const tooLarge = (file: string, bytes: number) =>
  fileError(
    file,
    `the file is ${bytes} bytes; a policy file may have at most ${MAX_POLICY_BYTES} bytes (${MAX_POLICY_BYTES / 1024} KB)`,
  );

/**
 * The text of a policy file, or a ConfigError: a file above MAX_POLICY_BYTES is refused from its
 * size, without reading it. Throws the error of the file system (e.g. ENOENT) as it is.
 */
export function readPolicyText(file: string): { text: string } | { error: ConfigError } {
  const fd = openSync(file, 'r');
  try {
    const { size } = fstatSync(fd);
    if (size > MAX_POLICY_BYTES) return { error: tooLarge(file, size) };
    return { text: readFileSync(fd, 'utf8') };
  } finally {
    closeSync(fd);
  }
}

/** Parses one policy from `text` as if read from `file`; never throws. */
export function parsePolicyText(file: string, text: string): PolicyFileResult {
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > MAX_POLICY_BYTES) return { ok: false, file, error: tooLarge(file, bytes) };
  try {
    const policy = parseSource(file, text, Policy, { refuseAliases: ALIASES_REFUSED });
    return { ok: true, loaded: { policy, file, text } };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, file, error: err };
    // A bug of ours, not the file's fault; still this file's problem only, and named as such.
    return {
      ok: false,
      file,
      error: fileError(file, `cannot be checked: ${(err as Error)?.message ?? err}`),
    };
  }
}

/** Reads and parses one policy file; never throws for a bad, huge or missing file. */
export function readPolicyFile(file: string): PolicyFileResult {
  let read: ReturnType<typeof readPolicyText>;
  try {
    read = readPolicyText(file);
  } catch (err) {
    return { ok: false, file, error: readError(file, err) };
  }
  return 'error' in read ? { ok: false, file, error: read.error } : parsePolicyText(file, read.text);
}

/** The issue of a policy whose name another file already uses, at the line of its `name`. */
export function duplicateNameIssue(loaded: LoadedPolicy, otherFile: string): SourceIssue {
  const pos = locateField(loaded.text, ['name']);
  return {
    file: loaded.file,
    line: pos?.line,
    column: pos?.column,
    field: 'name',
    reason: `duplicate policy name "${loaded.policy.name}" (also in ${otherFile})`,
  };
}

/** The files in their order, each once (`a.yaml` and `./a.yaml` are the same file). */
function uniqueFiles(files: readonly string[]): string[] {
  const seen = new Set<string>();
  return files.filter((file) => !seen.has(resolve(file)) && seen.add(resolve(file)));
}

/**
 * Loads every policy of the folder, or the explicit files. Throws one ConfigError listing all
 * problems (invalid files, duplicate names across files, rings in a cycle); returns the policies
 * in file order.
 */
export function loadPolicies(options: LoadPoliciesOptions = {}): LoadedPolicy[] {
  const files = options.files
    ? uniqueFiles(options.files)
    : listPolicyFiles(options.dir ?? DEFAULT_POLICY_DIR);
  const issues: SourceIssue[] = [];
  const policies: LoadedPolicy[] = [];
  const owner = new Map<string, string>();
  for (const file of files) {
    const result = readPolicyFile(file);
    if (!result.ok) {
      issues.push(...result.error.issues);
      continue;
    }
    const other = owner.get(result.loaded.policy.name);
    if (other !== undefined) {
      issues.push(duplicateNameIssue(result.loaded, other));
      continue;
    }
    owner.set(result.loaded.policy.name, file);
    policies.push(result.loaded);
  }
  issues.push(...ringCycleIssues(policies).map((c) => c.issue));
  if (issues.length > 0) throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  return policies;
}
