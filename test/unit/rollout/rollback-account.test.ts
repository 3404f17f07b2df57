/**
 * The account of a rollback (issue 20): each Collector a request chose lands in one category, from
 * its rollback rollout's counts and the Collectors its scan did not find; a rollout not started is
 * under way, a forgotten one unknown; "rolled back" is said only of those back.
 */
import { describe, expect, it } from 'vitest';
import type { RollbackEntry } from '../../../src/rollout/life/index.js';
import {
  describeRollbackAccount,
  type RollbackRolloutView,
  rollbackAccounts,
} from '../../../src/rollout/life/index.js';

const base = { request: 'r1', at: 1, by: 'ops', reason: 'rollback by ops', state: 'started' as const };

describe('rollbackAccounts', () => {
  it('puts each chosen Collector in one category and names each rollout with its phase', () => {
    const entries: RollbackEntry[] = [
      { ...base, policy: 'rollback-a', build: '19.400-5', collectors: 7 },
      { ...base, policy: 'rollback-b', build: '19.450-12', collectors: 4 },
      { ...base, policy: 'rollback-c', build: '19.300-1', collectors: 2 },
      { ...base, build: '19.200-1', collectors: 3, ids: [1, 2, 3], state: 'unavailable' },
      { ...base, request: 'r2', policy: 'rollback-d', build: '19.400-5', collectors: 1 },
    ];
    const views = new Map<string, RollbackRolloutView>([
      [
        'rollback-a@19.400-5',
        {
          phase: 'converged',
          counts: { succeeded: 1, not_alive: 1, unhealthy: 1 },
          unmatched: [
            { id: 10, finding: 'on_build' },
            { id: 11, finding: 'on_build' },
            { id: 12, finding: 'offline' },
            { id: 13, finding: 'hosted' },
          ],
        },
      ],
      // Not scanned yet: what it has not found is under way.
      ['rollback-b@19.450-12', { phase: 'running', counts: { pending: 1, succeeded: 1 } }],
    ]);
    const accounts = rollbackAccounts(
      entries,
      (id) => views.get(id),
      (p) => p === 'rollback-c',
    );
    expect(accounts).toEqual([
      {
        request: 'r1',
        by: 'ops',
        at: 1,
        requested: 16,
        back: 2,
        onBuild: 2,
        notAlive: 2,
        failed: 2,
        underWay: 5,
        unavailable: 3,
        unknown: 0,
        rollouts: [
          { policy: 'rollback-a', build: '19.400-5', collectors: 7, phase: 'converged' },
          { policy: 'rollback-b', build: '19.450-12', collectors: 4, phase: 'running' },
          { policy: 'rollback-c', build: '19.300-1', collectors: 2, phase: 'waiting' },
        ],
      },
      expect.objectContaining({
        request: 'r2',
        requested: 1,
        unknown: 1,
        rollouts: [expect.objectContaining({ phase: 'gone' })],
      }),
    ]);
  });

  it('says "rolled back" only of those back', () => {
    const none = describeRollbackAccount({
      request: 'r',
      by: 'ops',
      at: 1,
      requested: 13,
      back: 0,
      onBuild: 6,
      notAlive: 6,
      failed: 1,
      underWay: 0,
      unavailable: 0,
      unknown: 0,
      rollouts: [],
    });
    expect(none).toBe(
      'rollback of 13 Collectors requested: none rolled back, 6 already on their previous build (nothing to do), 6 not alive (cannot be moved now), 1 failed to go back',
    );
    expect(none).not.toMatch(/rolled back:/);
    const one = describeRollbackAccount({
      request: 'r',
      by: 'ops',
      at: 1,
      requested: 2,
      back: 1,
      onBuild: 0,
      notAlive: 0,
      failed: 0,
      underWay: 1,
      unavailable: 0,
      unknown: 0,
      rollouts: [],
    });
    expect(one).toBe('rollback of 2 Collectors requested: rolled back: 1, 1 under way');
  });
});
