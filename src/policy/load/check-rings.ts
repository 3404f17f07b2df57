/**
 * Rings across policy files (`after`, policy/rings.ts): the policies that follow each other must
 * not form a cycle (a → b → a would never start a build anywhere in it), so a cycle is refused at
 * load, each policy of it named with the file and line of its `after.policy`. A ring that follows
 * a policy no file defines is not refused (`plan --policy FILE` reads one file; `run` may get the
 * earlier policy later): its builds wait, and the daemon shows the problem `ring_undefined` in
 * `status` until the ring's file is added or the name corrected (cli/boot/policy-file-problems.ts).
 */
import type { SourceIssue } from '../../lib/errors.js';
import { locateField } from '../../lib/source/yaml-source.js';
import type { Policy } from '../schema.js';

/** A policy as loaded from its file (load-policies.ts's LoadedPolicy, named here to keep no cycle). */
interface LoadedPolicy {
  policy: Pick<Policy, 'name' | 'after'>;
  file: string;
  text: string;
}

/** The policies that are part of a cycle of `after`, each with its issue. */
export function ringCycleIssues<L extends LoadedPolicy>(
  loaded: readonly L[],
): { loaded: L; issue: SourceIssue }[] {
  const byName = new Map(loaded.map((l) => [l.policy.name, l]));
  const inCycle = new Map<string, string[]>();
  for (const start of loaded) {
    const path: string[] = [];
    let at: L | undefined = start;
    while (at && !path.includes(at.policy.name)) {
      path.push(at.policy.name);
      const next: string | undefined = at.policy.after?.policy;
      at = next === undefined ? undefined : byName.get(next);
    }
    if (!at) continue;
    const cycle = path.slice(path.indexOf(at.policy.name));
    if (cycle[0] === start.policy.name) inCycle.set(start.policy.name, [...cycle, start.policy.name]);
  }
  return [...inCycle].map(([name, cycle]) => {
    const l = byName.get(name) as L;
    const pos = locateField(l.text, ['after', 'policy']);
    return {
      loaded: l,
      issue: {
        file: l.file,
        line: pos?.line,
        column: pos?.column,
        field: 'after.policy',
        reason: `the rings form a cycle (${cycle.join(' → ')}): a build could never start in any of them`,
      },
    };
  });
}
