/**
 * The policy files' state (policy-store.ts) as the daemon's problems (rollout/problems/): one per
 * file that is not valid, under the id `policy:<file>`, with the line and reason of its first
 * problem, whether its last valid version is kept, and what ends it (the file is read again every
 * 2 s). A file that is valid again, or gone, takes its problem away.
 */
import type { PolicyFileStatus } from '../../policy/load/policy-store.js';
import type { DaemonProblem, ProblemBook } from '../../rollout/index.js';

const ID = 'policy:';

/** The line and the reason of a file's first problem (`file:line:column: field: reason`). */
export function firstProblemOf(file: string, error: string | undefined): { line?: number; reason: string } {
  const lines = (error ?? '').split('\n').filter(Boolean);
  const [first = 'invalid', ...more] = lines;
  const rest = first.startsWith(`${file}:`) ? first.slice(file.length + 1) : first;
  const at = /^(\d+)(?::\d+)?: (.*)$/s.exec(rest);
  const reason = (at ? (at[2] as string) : rest.replace(/^\s+/, '')) || 'invalid';
  const also = more.length ? ` (and ${more.length} more problem${more.length === 1 ? '' : 's'})` : '';
  return { ...(at ? { line: Number(at[1]) } : {}), reason: `${reason}${also}` };
}

export function policyFileProblem(s: PolicyFileStatus, now: number): DaemonProblem {
  const { line, reason } = firstProblemOf(s.file, s.error);
  return {
    kind: 'policy_invalid',
    subject: s.file,
    file: s.file,
    ...(line === undefined ? {} : { line }),
    reason,
    ...(s.policy ? { keeping: s.policy.name } : {}),
    fix: 'correct the file: the daemon reads it again every 2 s',
    since: now,
  };
}

/** Brings the book's policy file problems up to date with `status`. */
export function syncPolicyFileProblems(
  book: ProblemBook,
  status: readonly PolicyFileStatus[],
  now: number,
): void {
  const keep = new Set<string>();
  for (const s of status) {
    if (s.state === 'valid') continue;
    keep.add(`${ID}${s.file}`);
    book.set(`${ID}${s.file}`, policyFileProblem(s, now));
  }
  book.clearOthers(ID, keep);
}
