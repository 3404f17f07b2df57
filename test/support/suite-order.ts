/**
 * The order in which `npm test` starts its files, on a fresh clone (no vitest cache: the default
 * order is then by file size, which puts short files of long tests last). The end-to-end files
 * go first (most take 10–120 s, waiting on accelerated clocks), then the integration files, then
 * the unit files: the short ones fill the other worker while the last long file ends, instead of
 * one long file running alone at the end. With a cache (a second run on one machine), vitest's own
 * order (failed first, then longest first) is kept within each group.
 */
import { BaseSequencer, type TestSpecification } from 'vitest/node';

const GROUPS = ['/test/e2e/', '/test/integration/', '/test/unit/'];

function groupOf(spec: TestSpecification): number {
  const i = GROUPS.findIndex((g) => spec.moduleId.includes(g));
  return i === -1 ? GROUPS.length : i;
}

export class SuiteOrder extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const within = await super.sort(files);
    const place = new Map(within.map((f, i) => [f, i]));
    return [...within].sort((a, b) => groupOf(a) - groupOf(b) || (place.get(a) ?? 0) - (place.get(b) ?? 0));
  }
}
