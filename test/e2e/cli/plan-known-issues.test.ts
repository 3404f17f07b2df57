/**
 * `plan` with known issues (#21), the built CLI against the simulator: the Collectors a known
 * issue of the target build holds back are not among those that would move; a sentence per
 * issue says how many, what becomes of them and the note; `--json` lists them under `held`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import type { FleetFileInput } from '../../../src/simulator/schema.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';

let harness: Harness | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const fleet: FleetFileInput = {
  builds: ['19.400-5', '19.470-4'],
  collectors: [
    ...[1, 2, 3].map((id) => ({ id, version: '19.400-5', osName: 'Linux' })),
    ...[4, 5].map((id) => ({ id, version: '19.400-5', osName: 'Mac OS X' })),
    { id: 6, version: '19.400-5', osName: 'Windows Server 2019' },
  ],
};

async function cli(h: Harness, args: string[]): Promise<{ code: number | null; out: string }> {
  const child = h.spawnCli(args);
  const code = await exitOf(child, 30_000);
  return { code, out: child.output() };
}

describe('plan with knownIssues', () => {
  it('leaves the held Collectors out of the move and names each issue with its note', async () => {
    harness = await startHarness({
      timeScale: 1,
      fleet,
      policy: {
        name: 'careful',
        knownIssues: [
          {
            build: '19.470-*',
            select: { osName: 'Mac OS X' },
            action: 'skip',
            note: 'stops until restarted by hand',
          },
          {
            build: '19.470-4',
            select: { ids: [6] },
            action: 'manual',
            note: 'needs the service account re-entered',
          },
        ],
      },
    });
    const h = harness;
    const table = await cli(h, ['plan', '--policy', h.policyFile, '--wide']);
    expect(table.code, table.out).toBe(0);
    expect(table.out).toMatch(/policy careful: 3 of 6 offered Collectors would move to 19\.470-4/);
    expect(table.out).toContain(
      'known issue of 19.470-4: 2 Collectors left out (stops until restarted by hand)',
    );
    expect(table.out).toContain(
      'known issue of 19.470-4: 1 Collector put on the worklist (needs the service account re-entered)',
    );
    const json = await cli(h, ['plan', '--policy', h.policyFile, '--json']);
    const plan = JSON.parse(json.out) as {
      collectors: { id: number }[];
      held: { id: number; action: string }[];
    };
    expect(plan.collectors.map((c) => c.id)).toEqual([1, 2, 3]);
    expect(plan.held.map((c) => [c.id, c.action])).toEqual([
      [4, 'skip'],
      [5, 'skip'],
      [6, 'manual'],
    ]);
  }, 60_000);
});
