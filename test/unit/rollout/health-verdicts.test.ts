/**
 * What health events add to a verification pass (listings/health-verdicts.ts): only counted
 * events raised after the Collector's create (on the service's clock) make it unhealthy, with
 * the tracker as its cause; noise from before never does; builds before 19.308-2 and accounts
 * without health events are judged by heartbeat only, said so; a heartbeat verdict waits for a
 * read that covers the whole bake, until its deadline.
 */
import { describe, expect, it } from 'vitest';
import type { HealthEvent } from '../../../src/api/index.js';
import type { HealthSettings, VerifySettings } from '../../../src/policy/verify.js';
import {
  type CollectorEvent,
  type CollectorRecord,
  newRecord,
} from '../../../src/rollout/collector/index.js';
import type { RolloutRecord } from '../../../src/rollout/life/index.js';
import {
  AWAITING_HEALTH,
  awaitingHealth,
  counted,
  estimateOffset,
  type HealthView,
  healthVerdicts,
  sendsHealthEvents,
  verificationEvents,
} from '../../../src/rollout/listings/index.js';

const MIN = 60_000;
const T0 = Date.UTC(2026, 10, 29, 1, 0, 0);
const BUILD = '19.470-4';
const HEALTH: HealthSettings = { severities: ['Error'], ignore: [] };
const VERIFY: VerifySettings = { withinMs: 10 * MIN, bakeMs: 5 * MIN, intervalMs: MIN, health: HEALTH };

function record(id: number, createdAt: number, seenAt: number): CollectorRecord {
  return {
    ...newRecord({ id, name: `c${id}`, collectorVersion: '19.400-5' }, BUILD, T0),
    state: 'verifying',
    createSentAt: createdAt,
    requestTime: createdAt + 100,
    seenOnBuildAt: seenAt,
    seenAliveMark: seenAt,
  };
}

function event(collectorId: number, eventTime: number, patch: Partial<HealthEvent> = {}): HealthEvent {
  return {
    eventId: `e-${collectorId}-${eventTime}`,
    trackerId: 'FileCollectionBroken',
    trackerName: 'File Collection Broken',
    description: 'Collection stopped.',
    severity: 'Error',
    eventTime,
    collectorId,
    resourceType: 'Source',
    resourceId: collectorId * 1000 + 1,
    ...patch,
  };
}

function view(at: number, events: HealthEvent[], offsetMs = 0): HealthView {
  const byCollector = new Map<number, HealthEvent[]>();
  for (const e of events) {
    const id = e.collectorId as number;
    byCollector.set(id, [...(byCollector.get(id) ?? []), e]);
  }
  return { kind: 'events', at, offsetMs, byCollector, nextAt: at + MIN };
}

const verified = (ids: number[]) =>
  new Map<number, CollectorEvent>(ids.map((id) => [id, { type: 'verified' }]));

describe('healthVerdicts', () => {
  const now = T0 + 20 * MIN;
  const created = T0;
  const seen = T0 + 5 * MIN;

  it('a counted event raised after the create makes the Collector unhealthy, the tracker its cause', () => {
    const r = record(1, created, seen);
    const out = healthVerdicts([r], verified([1]), view(now, [event(1, T0 + 7 * MIN)]), VERIFY, BUILD, now);
    expect(out.get(1)).toEqual({
      type: 'unhealthy',
      message: expect.stringMatching(
        /^health event File Collection Broken \(FileCollectionBroken, Error\) on 19\.470-4 since 2026-11-29T01:07:00\.000Z: Collection stopped\.$/,
      ),
      failureClass: 'health:FileCollectionBroken',
    });
    // Also before the end of its bake, whatever the heartbeat said so far.
    const early = healthVerdicts(
      [r],
      new Map([[1, { type: 'seen_on_build', mark: 0, dueAt: now }]]),
      view(now, [event(1, T0 + 7 * MIN)]),
      VERIFY,
      BUILD,
      now,
    );
    expect(early.get(1)?.type).toBe('unhealthy');
  });

  it('noise from before the create never counts, on the service clock (offset) too', () => {
    const r = record(1, created, seen);
    const noise = [
      event(1, T0 - 3 * 3_600_000),
      event(1, T0 - 1000, { trackerId: 'SourceCredentialsInvalid' }),
    ];
    expect(healthVerdicts([r], verified([1]), view(now, noise), VERIFY, BUILD, now).get(1)).toEqual({
      type: 'verified',
    });
    // The service's clock is 2 minutes ahead of ours: an event at our create + 1 minute is from before it.
    const ahead = view(now, [event(1, T0 + MIN)], 2 * MIN);
    expect(healthVerdicts([r], verified([1]), ahead, VERIFY, BUILD, now).get(1)).toEqual({
      type: 'verified',
    });
    const after = view(now, [event(1, T0 + 3 * MIN)], 2 * MIN);
    expect(healthVerdicts([r], verified([1]), after, VERIFY, BUILD, now).get(1)?.type).toBe('unhealthy');
  });

  it('counts by severity, trackers and ignore', () => {
    const warn = event(1, T0 + MIN, { severity: 'Warning', trackerId: 'IngestThrottled' });
    expect(counted(warn, HEALTH)).toBe(false);
    expect(counted(warn, { severities: ['Error', 'Warning'], ignore: [] })).toBe(true);
    expect(counted(warn, { severities: ['Error', 'Warning'], ignore: ['IngestThrottled'] })).toBe(false);
    const broken = event(1, T0 + MIN);
    expect(counted(broken, { ...HEALTH, trackers: ['FileCollectionBroken'] })).toBe(true);
    expect(counted(broken, { ...HEALTH, trackers: ['SourceCredentialsInvalid'] })).toBe(false);
  });

  it('builds before 19.308-2 and accounts without health events: heartbeat only, said so', () => {
    expect(sendsHealthEvents('19.300-7')).toBe(false);
    expect(sendsHealthEvents('19.308-2')).toBe(true);
    const r = record(1, created, seen);
    expect(healthVerdicts([r], verified([1]), undefined, VERIFY, '19.300-7', now).get(1)).toEqual({
      type: 'verified',
      message: 'verified by heartbeat only: builds before 19.308-2 send no health events',
    });
    expect(healthVerdicts([r], verified([1]), { kind: 'off' }, VERIFY, BUILD, now).get(1)).toEqual({
      type: 'verified',
      message: 'verified by heartbeat only: the account answers no health events',
    });
    // Off in the policy: the heartbeat's word, untouched.
    const off = { ...VERIFY, health: undefined };
    expect(
      healthVerdicts([r], verified([1]), view(now, [event(1, T0 + 7 * MIN)]), off, BUILD, now).get(1),
    ).toEqual({
      type: 'verified',
    });
  });

  it('a heartbeat verdict waits for a read that covers the bake, until its deadline', () => {
    const r = record(1, created, seen); // bake ends at T0 + 10 min
    const stale = view(T0 + 9.5 * MIN, []); // the next read may come at T0 + 10.5 min
    const waited = healthVerdicts([r], verified([1]), stale, VERIFY, BUILD, T0 + 10 * MIN);
    expect(waited.get(1)).toMatchObject({ type: 'verify_later', dueAt: T0 + 10.5 * MIN });
    expect(
      healthVerdicts([r], verified([1]), view(T0 + 10 * MIN, []), VERIFY, BUILD, T0 + 10 * MIN).get(1),
    ).toEqual({
      type: 'verified',
    });
    const unreadable: HealthView = {
      kind: 'unreadable',
      message: 'GET healthEvents answered 503',
      nextAt: T0 + 11 * MIN,
    };
    expect(healthVerdicts([r], verified([1]), unreadable, VERIFY, BUILD, T0 + 10 * MIN).get(1)?.type).toBe(
      'verify_later',
    );
    expect(healthVerdicts([r], verified([1]), unreadable, VERIFY, BUILD, T0 + 20 * MIN).get(1)).toEqual({
      type: 'verified',
      message: 'verified by heartbeat only: health events: GET healthEvents answered 503',
    });
  });

  it('an unhealthy verdict of the heartbeat stays as it is', () => {
    const r = record(1, created, seen);
    const stopped = new Map<number, CollectorEvent>([
      [1, { type: 'unhealthy', message: 'stopped heartbeating' }],
    ]);
    expect(
      healthVerdicts([r], stopped, view(now, [event(1, T0 + 7 * MIN)]), VERIFY, BUILD, now).get(1),
    ).toEqual({
      type: 'unhealthy',
      message: 'stopped heartbeating',
    });
  });
});

describe('a Collector awaiting only the health events', () => {
  it('is verified by its heartbeat already: its next look needs no listing, the health read decides', () => {
    const r = { ...record(1, T0, T0 + 5 * MIN), message: AWAITING_HEALTH };
    expect(awaitingHealth(r)).toBe(true);
    expect(awaitingHealth({ ...r, state: 'succeeded' })).toBe(false);
    const rollout = {
      id: 'p@19.470-4',
      build: BUILD,
      settings: { verify: VERIFY },
    } as unknown as RolloutRecord;
    // No listing sighting of it (none was read for it): still the heartbeat's `verified`.
    const base = verificationEvents([r], new Map(), rollout, T0 + 11 * MIN);
    expect(base.get(1)).toEqual({ type: 'verified' });
    const now = T0 + 11 * MIN;
    expect(healthVerdicts([r], base, view(now, []), VERIFY, BUILD, now).get(1)).toEqual({ type: 'verified' });
    expect(
      healthVerdicts([r], base, view(now, [event(1, T0 + 9 * MIN)]), VERIFY, BUILD, now).get(1)?.type,
    ).toBe('unhealthy');
  });
});

describe('estimateOffset', () => {
  it('is the median of the freshest heartbeat minus when the page was asked for', () => {
    expect(estimateOffset([])).toBeUndefined();
    expect(
      estimateOffset([
        { freshest: 1000 + 120_000, requestedAt: 1000 },
        { freshest: 2000 + 119_000, requestedAt: 2000 },
        { freshest: 3000 + 500_000, requestedAt: 3000 },
        { freshest: 0, requestedAt: 4000 },
      ]),
    ).toBe(120_000);
  });
});
