/**
 * What `/readyz` says of the policy files: undefined when every file is valid, else one entry per
 * file that is not, with its first problem (file:line:column: field: reason) and whether its last
 * valid version is still in force. A daemon that runs on a kept version is not ready, so that an
 * operator (or a rollout of the ConfigMap) sees that an edit did not take.
 */
import type { PolicyFileStatus } from './policy-store.js';

export function policyProblems(status: readonly PolicyFileStatus[]): string | undefined {
  const bad = status.filter((s) => s.state !== 'valid');
  if (bad.length === 0) return undefined;
  return bad
    .map((s) => {
      const [first = `${s.file}: ${s.state}`, ...more] = (s.error ?? '').split('\n').filter(Boolean);
      const count = more.length ? ` (and ${more.length} more problem${more.length === 1 ? '' : 's'})` : '';
      const kept = s.state === 'invalid-keeping-last-valid' ? ' (keeping its last valid version)' : '';
      return `${first}${count}${kept}`;
    })
    .join('; ');
}
