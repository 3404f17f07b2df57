/**
 * The policy files' state (policy-store.ts) as the daemon's problems (rollout/problems/): one per
 * file that is not valid, under the id `policy:<file>`, with the line and reason of its first
 * problem, whether its last valid version is kept, and what ends it (the file is read again every
 * 2 s). A file that is valid again, or gone, takes its problem away.
 *
 * And one per policy in force that follows a ring (`after.policy`) that no policy in force defines,
 * under the id `ring:<policy>`: its builds would wait for that ring for ever (a misspelt name, or
 * a file left out of `--policy`). The files are loaded one by one, so this is not refused at load
 * (load/check-rings.ts): it is told here, and ends once the ring's file is added or the name is
 * corrected.
 */
import type { PolicyFileStatus } from '../../policy/load/policy-store.js';
import type { DaemonProblem, ProblemBook } from '../../rollout/index.js';

const ID = 'policy:';
const RING_ID = 'ring:';

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
  const defined = new Set(status.flatMap((s) => (s.policy ? [s.policy.name] : [])));
  const rings = new Set<string>();
  for (const s of status) {
    const ring = s.policy?.after?.policy;
    if (!s.policy || ring === undefined || defined.has(ring)) continue;
    rings.add(`${RING_ID}${s.policy.name}`);
    book.set(`${RING_ID}${s.policy.name}`, undefinedRingProblem(s.policy.name, ring, s.file, now));
  }
  book.clearOthers(RING_ID, rings);
}

export function undefinedRingProblem(policy: string, ring: string, file: string, now: number): DaemonProblem {
  return {
    kind: 'ring_undefined',
    subject: policy,
    policy,
    after: ring,
    file,
    reason: `follows ring ${ring} (after.policy), which no policy file of this daemon defines: no build starts in it`,
    fix: `add the policy file of ${ring} to the daemon, or correct after.policy in ${file}`,
    since: now,
  };
}
