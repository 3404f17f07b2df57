/**
 * The scheduler's pure parts: which build a policy's target names today and the rollout settings
 * a policy hands the workers and the state machine; and the helpers of collector-state.ts it
 * counts and discovers with (sumStates, newRecord).
 */
import { describe, expect, it } from 'vitest';
import type { BuildTarget } from '../../../src/api/index.js';
import { Policy } from '../../../src/policy/schema.js';
import { newRecord, sumStates } from '../../../src/rollout/collector/index.js';
import { MAX_BACKOFF_MS, resolveTarget, settingsOf } from '../../../src/rollout/tick/index.js';

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
    expect(resolveTarget('19.480-1', BUILDS)).toBe('19.480-1');
    expect(resolveTarget('19.999-1', BUILDS)).toBeUndefined();
    expect(resolveTarget('latest', [])).toBeUndefined();
    expect(resolveTarget('19.400-5', [])).toBeUndefined();
  });
});

describe('settingsOf', () => {
  it('hands on the policy’s poll, time-out and retry settings in ms', () => {
    const policy = Policy.parse({
      name: 'linux-fleet',
      poll: { initial: '30s', max: '4m', jitter: 0.1 },
      taskTimeout: '40m',
      retry: {
        notAlive: { attempts: 2, backoff: '15m', until: '2h' },
        errors: { attempts: 4, backoff: '2m' },
        transient: { attempts: 7, backoff: '10s' },
      },
    });
    expect(settingsOf(policy)).toStrictEqual({
      pollInitialMs: 30_000,
      pollMaxMs: 240_000,
      pollJitter: 0.1,
      taskTimeoutMs: 2_400_000,
      notAliveAttempts: 2,
      notAliveBackoffMs: 900_000,
      notAliveUntilMs: 7_200_000,
      errorAttempts: 4,
      errorBackoffMs: 120_000,
      transientAttempts: 7,
      transientBackoffMs: 10_000,
      maxBackoffMs: 30 * 60_000,
      verify: {
        withinMs: 600_000,
        bakeMs: 300_000,
        intervalMs: 60_000,
        health: { severities: ['Error'], ignore: [] },
      },
      causes: {
        patterns: [],
        actions: {
          network: { action: 'retry', attempts: 3, backoff: 600_000 },
          disk_space: { action: 'manual' },
          upgrades_disabled: { action: 'manual' },
          permission: { action: 'manual' },
          unknown: { action: 'fail' },
        },
      },
    });
  });

  it('uses the documented defaults, with no notAlive.until (as long as the rollout runs)', () => {
    const settings = settingsOf(Policy.parse({ name: 'p' }));
    expect(settings).toStrictEqual({
      pollInitialMs: 60_000,
      pollMaxMs: 300_000,
      pollJitter: 0.2,
      taskTimeoutMs: 35 * 60_000,
      notAliveAttempts: 5,
      notAliveBackoffMs: 600_000,
      errorAttempts: 3,
      errorBackoffMs: 60_000,
      transientAttempts: 20,
      transientBackoffMs: 30_000,
      maxBackoffMs: 30 * 60_000,
      verify: {
        withinMs: 600_000,
        bakeMs: 300_000,
        intervalMs: 60_000,
        health: { severities: ['Error'], ignore: [] },
      },
      causes: {
        patterns: [],
        actions: {
          network: { action: 'retry', attempts: 3, backoff: 600_000 },
          disk_space: { action: 'manual' },
          upgrades_disabled: { action: 'manual' },
          permission: { action: 'manual' },
          unknown: { action: 'fail' },
        },
      },
    });
    expect(Object.keys(settings)).not.toContain('notAliveUntilMs');
  });

  it('leaves verification out when the policy turns it off, and hands on failureCauses as parsed', () => {
    const settings = settingsOf(
      Policy.parse({
        name: 'p',
        verify: false,
        failureCauses: {
          patterns: [{ class: 'quota', match: 'quota exceeded' }],
          actions: { quota: 'manual' },
        },
      }),
    );
    expect(Object.keys(settings)).not.toContain('verify');
    expect(settings.causes?.patterns).toEqual([{ class: 'quota', match: 'quota exceeded' }]);
    expect(settings.causes?.actions.quota).toEqual({ action: 'manual' });
  });

  it('sets the ceiling of grown back-offs at 30 minutes (schema.ts: "at most 30m"), whatever the base', () => {
    expect(MAX_BACKOFF_MS).toBe(30 * 60_000);
    const long = Policy.parse({
      name: 'p',
      retry: { errors: { backoff: '2h' }, transient: { backoff: '1h' } },
    });
    expect(settingsOf(long)).toMatchObject({
      errorBackoffMs: 7_200_000,
      transientBackoffMs: 3_600_000,
      maxBackoffMs: MAX_BACKOFF_MS,
    });
  });
});

describe('sumStates', () => {
  it('adds the counts of the states asked for, missing ones as 0', () => {
    const counts = { queued: 3, pending: 2, succeeded: 10, waiting_retry: 4, error: 1 };
    expect(sumStates(counts, ['queued', 'pending', 'progressing'])).toBe(5);
    expect(sumStates(counts, ['waiting_retry', 'error'])).toBe(5);
    expect(sumStates(counts, [])).toBe(0);
    expect(sumStates({}, ['queued'])).toBe(0);
  });
});

describe('newRecord', () => {
  it('records a discovered Collector as queued, from its current build to the rollout’s, counters at 0', () => {
    const r = newRecord(
      {
        id: 101,
        name: 'web-1',
        hostName: 'web-1.prod.internal',
        timeZone: 'Europe/Berlin',
        collectorVersion: '19.400-5',
      },
      '19.470-4',
      1_736_150_400_000,
    );
    expect(r).toStrictEqual({
      id: 101,
      name: 'web-1',
      hostName: 'web-1.prod.internal',
      timeZone: 'Europe/Berlin',
      from: '19.400-5',
      to: '19.470-4',
      state: 'queued',
      attempts: 0,
      admissions: 0,
      notAliveAnswers: 0,
      errorAnswers: 0,
      transientErrors: 0,
      statusReads: 0,
      statusErrors: 0,
      discoveredAt: 1_736_150_400_000,
    });
  });

  it('leaves out a time zone it was not given and takes an empty host name', () => {
    const r = newRecord({ id: 7, name: 'c-7', collectorVersion: '19.450-12' }, '19.470-4', 5);
    expect(r.hostName).toBe('');
    expect(Object.keys(r)).not.toContain('timeZone');
    expect(r).toMatchObject({ id: 7, state: 'queued', from: '19.450-12', to: '19.470-4', discoveredAt: 5 });
  });
});
