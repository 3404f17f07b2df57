/**
 * What `status` says under a rollout's row about its policy's version rules (#21): the Collectors
 * moved first because they were below `minimumBuild`, and those a known issue of the build holds
 * back, with each issue's note: `3 below minimumBuild 19.400-1 moved first; known issue of
 * 19.516-* (osName=Mac OS X): stops until restarted by hand — 3 skipped`. The rollout record
 * carries them (rollout/tick/target-chooser.ts writes the notes, the Collector store the counts).
 */
import type { RolloutStatus } from '../../rollout/index.js';

/** The sentences; `oneLine` puts outside text on one safe line (explain-rollout.ts's). */
export function versionRuleAsides(
  r: Pick<RolloutStatus, 'minimumBuild' | 'belowMinimum' | 'knownIssues' | 'id'>,
  oneLine: (text: string) => string,
): string[] {
  const out: string[] = [];
  const below = r.belowMinimum ?? 0;
  if (r.minimumBuild && below > 0)
    out.push(`${below} below minimumBuild ${oneLine(r.minimumBuild)} moved first`);
  for (const issue of r.knownIssues ?? []) {
    const where = issue.where ? ` (${oneLine(issue.where)})` : '';
    const fate =
      issue.action === 'skip'
        ? 'matching Collectors skipped'
        : `matching Collectors on the worklist (\`fleet-upgrade report ${oneLine(r.id)} --worklist\`)`;
    out.push(`known issue of ${oneLine(issue.build)}${where}: ${oneLine(issue.note)} — ${fate}`);
  }
  return out;
}
