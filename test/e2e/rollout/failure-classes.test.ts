/**
 * The `collectors.failed` event carries the failure classes of the rollout's failed Collectors:
 * the built CLI's `run` (run `npm run build` first) against the simulator over HTTP with a real
 * Redis. Tasks fail for want of disk space, for a network error, for a permission and for no
 * known cause; the policy fails them all (no worklist, no retry). The event's `byClass` counts
 * each class (read from the Collectors' records), `history --json` shows it.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { type SharedSimOrgs, startSharedSimOrgs } from '../../support/one-sim-orgs-harness.js';
import { exitOf } from '../../support/rollout-harness.js';
import { waitUntil } from '../../support/wait-until.js';

let harness: SharedSimOrgs | undefined;
afterEach(async () => {
  await harness?.close();
  harness = undefined;
});

const CAUSES = [
  'disk_space',
  'disk_space',
  'disk_space',
  'network',
  'network',
  'permission',
  'unknown',
] as const;

interface HistoryEvent {
  type: string;
  detail?: {
    new?: number;
    total?: number;
    byState?: Record<string, number>;
    byClass?: Record<string, number>;
  };
}

describe('collectors.failed by failure class', () => {
  it("names the failed Collectors' classes, the most frequent first", async () => {
    const h = await startSharedSimOrgs({
      orgs: [
        {
          fleet: {
            name: 'emea',
            builds: ['19.470-4', '19.480-2'],
            users: [{ accessId: 'emea-ops', accessKey: 'emea-secret' }],
            collectors: [
              ...CAUSES.map((cause, i) => ({
                id: i + 1,
                version: '19.470-4',
                outcome: 'fail' as const,
                failureCause: cause,
                upgradeSeconds: 60,
              })),
              // Long upgrades keep the rollout running past the scheduler's 5 minutes between reports.
              ...[20, 21].map((id) => ({
                id,
                version: '19.470-4',
                outcome: 'succeed' as const,
                upgradeSeconds: 3600,
              })),
            ],
            behaviour: { incrementalAbove: 0 },
          },
        },
      ],
      policy: {
        name: 'emea-fleet',
        maxInFlight: 10,
        verify: false,
        poll: { initial: '20s', max: '1m' },
        failureCauses: {
          actions: { disk_space: 'fail', network: 'fail', permission: 'fail', unknown: 'fail' },
        },
      },
      timeScale: 300,
    });
    harness = h;
    const run = h.startRun();
    const id = 'emea-fleet@19.480-2';
    let failed: HistoryEvent | undefined;
    await waitUntil(
      async () => {
        const out = await h.cli(['history', id, '--json']);
        if (out.code !== 0) return false;
        const { events } = JSON.parse(out.out) as { events: HistoryEvent[] };
        failed = events.filter((e) => e.type === 'collectors.failed').at(-1);
        return failed?.detail?.total === CAUSES.length;
      },
      40_000,
      `a collectors.failed event with every failure; ${run.output()}`,
    );
    expect(failed?.detail?.byState).toEqual({ failed: 7 });
    expect(failed?.detail?.byClass).toEqual({ disk_space: 3, network: 2, permission: 1, unknown: 1 });
    expect(Object.keys(failed?.detail?.byClass ?? {})).toEqual([
      'disk_space',
      'network',
      'permission',
      'unknown',
    ]);
    run.kill('SIGTERM');
    expect(await exitOf(run, 15_000)).toBe(0);
  }, 90_000);
});
