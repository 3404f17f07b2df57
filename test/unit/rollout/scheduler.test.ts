/**
 * The scheduler's pure parts: which build a policy's target names today, the rollout settings a
 * policy hands the workers, and counting over states.
 */
import { describe, expect, it } from 'vitest';
import type { BuildTarget } from '../../../src/api/index.js';
import { Policy } from '../../../src/policy/schema.js';
import { newRecord } from '../../../src/rollout/scan-upgradable.js';
import { resolveTarget, settingsOf, sumStates } from '../../../src/rollout/scheduler.js';

const BUILDS: BuildTarget[] = [
  { version: '19.400-5', latest: false },
  { version: '19.470-4', latest: true },
  { version: '19.480-1', latest: false },
];

describe('resolveTarget', () => {
  it('resolves latest to the build the service flags as latest, not the last one listed', () => {
    expect(resolveTarget('latest', BUILDS)).toBe('19.470-4');
  });

  it('falls back to the last build when none is flagged', () => {
    expect(
      resolveTarget(
        'latest',
        BUILDS.map((b) => ({ ...b, latest: false })),
      ),
    ).toBe('19.480-1');
  });

  it('takes a named build only when the service offers it', () => {
    expect(resolveTarget('19.400-5', BUILDS)).toBe('19.400-5');
    expect(resolveTarget('19.999-1', BUILDS)).toBeUndefined();
    expect(resolveTarget('latest', [])).toBeUndefined();
  });
});

describe('settingsOf', () => {
  it('hands the workers the policy’s poll, time-out and retry settings in ms', () => {
    const policy = Policy.parse({
      name: 'linux-fleet',
      poll: { initial: '30s', max: '4m', jitter: 0.1 },
      taskTimeout: '40m',
      retry: { notAlive: { attempts: 2, backoff: '15m' } },
    });
    expect(settingsOf(policy)).toEqual({
      pollInitialMs: 30_000,
      pollMaxMs: 240_000,
      pollJitter: 0.1,
      taskTimeoutMs: 2_400_000,
      notAliveAttempts: 2,
      notAliveBackoffMs: 900_000,
    });
  });

  it('uses the documented defaults', () => {
    expect(settingsOf(Policy.parse({ name: 'p' }))).toEqual({
      pollInitialMs: 60_000,
      pollMaxMs: 300_000,
      pollJitter: 0.2,
      taskTimeoutMs: 35 * 60_000,
      notAliveAttempts: 5,
      notAliveBackoffMs: 600_000,
    });
  });
});

describe('sumStates', () => {
  it('adds the counts of the states asked for, missing ones as 0', () => {
    const counts = { queued: 3, pending: 2, succeeded: 10 };
    expect(sumStates(counts, ['queued', 'pending', 'progressing'])).toBe(5);
    expect(sumStates(counts, [])).toBe(0);
    expect(sumStates({}, ['queued'])).toBe(0);
  });
});

describe('newRecord', () => {
  it('records a discovered Collector as queued, from its current build to the rollout’s', () => {
    const r = newRecord(
      {
        id: 101,
        name: 'web-1',
        hostName: 'web-1.prod.internal',
        timeZone: 'Europe/Berlin',
        collectorVersion: '19.400-5',
      } as Parameters<typeof newRecord>[0],
      '19.470-4',
      1_736_150_400_000,
    );
    expect(r).toEqual({
      id: 101,
      name: 'web-1',
      hostName: 'web-1.prod.internal',
      timeZone: 'Europe/Berlin',
      from: '19.400-5',
      to: '19.470-4',
      state: 'queued',
      attempts: 0,
      statusReads: 0,
      discoveredAt: 1_736_150_400_000,
    });
  });
});
