/**
 * Loads rollout policies from a folder (config/policies by default: every `*.yaml` / `*.yml`
 * file, one policy per file, files starting with `.` ignored) or from explicit files. Nothing is
 * half-loaded: every problem of every file is collected, each naming file, line, field and
 * reason, and thrown as one ConfigError, so that the daemon refuses to start on a bad policy.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, formatIssue, type SourceIssue } from '../lib/errors.js';
import { locateField, parseSource } from '../lib/yaml-source.js';
import { Policy } from './schema.js';

export const DEFAULT_POLICY_DIR = 'config/policies';
const POLICY_FILE = /^[^.].*\.ya?ml$/i;

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

function readError(file: string, err: unknown): ConfigError {
  const code = (err as NodeJS.ErrnoException).code;
  const reason = code === 'ENOENT' ? 'file not found' : `cannot be read: ${(err as Error).message}`;
  return new ConfigError(`${file}: ${reason}`, [{ file, field: '', reason }]);
}

/** Parses one policy from `text` as if read from `file`. */
export function parsePolicyText(file: string, text: string): PolicyFileResult {
  try {
    return { ok: true, loaded: { policy: parseSource(file, text, Policy), file, text } };
  } catch (err) {
    if (err instanceof ConfigError) return { ok: false, file, error: err };
    throw err;
  }
}

/** Reads and parses one policy file; never throws for a bad or missing file. */
export function readPolicyFile(file: string): PolicyFileResult {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    return { ok: false, file, error: readError(file, err) };
  }
  return parsePolicyText(file, text);
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
 * problems (invalid files, duplicate names across files); returns the policies in file order.
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
  if (issues.length > 0) throw new ConfigError(issues.map(formatIssue).join('\n'), issues);
  return policies;
}
