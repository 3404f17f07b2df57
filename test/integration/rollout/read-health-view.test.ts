/**
 * How a verification pass reads health events (listings/read-health-view.ts), with the real
 * client against the simulator over HTTP: the account's list once for every Collector, at most
 * once per `verify.interval` and only when a verdict waits for it; an account that answers 403
 * turns them off for the organization, said once; a build before 19.308-2 asks nothing.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { createManualClock } from '../../../src/lib/clock.js';
import { type CollectorEvent, newRecord } from '../../../src/rollout/collector/index.js';
import type { RolloutRecord } from '../../../src/rollout/life/index.js';
import { newHealthMemory, readHealthView } from '../../../src/rollout/listings/index.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { captureLogger } from '../../support/capture-logger.js';
import { startTestSimulator, stopTestSimulators, testFleet } from '../../support/simulator.js';

afterEach(async () => {
  await closeTestClients();
  await stopTestSimulators();
});

const MIN = 60_000;
const BUILD = '19.470-4';
const rollout = {
  id: `p@${BUILD}`,
  build: BUILD,
  settings: {
    verify: {
      withinMs: 10 * MIN,
      bakeMs: 5 * MIN,
      intervalMs: MIN,
      health: { severities: ['Error'], ignore: [] },
    },
  },
} as unknown as RolloutRecord;
const records = [1, 2, 3].map((id) =>
  newRecord({ id, name: `c${id}`, collectorVersion: '19.400-5' }, BUILD, 0),
);
const verified = new Map<number, CollectorEvent>(records.map((r) => [r.id, { type: 'verified' }]));
const waiting = new Map<number, CollectorEvent>(
  records.map((r) => [r.id, { type: 'seen_on_build', mark: 0, dueAt: 0 }]),
);

describe('readHealthView', () => {
  it('reads the account list once for all, at most once per interval, only when a verdict waits', async () => {
    const t = await startTestSimulator(testFleet({ behaviour: { healthEvents: { noiseRatio: 1 } } }));
    const { client } = createTestClient(t.sim.baseUrl);
    const clock = createManualClock(Date.UTC(2026, 10, 29));
    const deps = { api: client, clock, logger: captureLogger().logger, health: newHealthMemory() };
    // Nobody's verdict waits: nothing is read.
    expect(
      await readHealthView(deps, rollout, 'default', BUILD, records, waiting, undefined),
    ).toBeUndefined();
    const first = await readHealthView(deps, rollout, 'default', BUILD, records, verified, undefined);
    expect(first?.kind).toBe('events');
    if (first?.kind !== 'events') return;
    expect(first.byCollector.size).toBeGreaterThan(3);
    // Within the interval: the same read; after it: a new one.
    clock.advance(MIN - 1);
    expect(await readHealthView(deps, rollout, 'default', BUILD, records, verified, undefined)).toBe(first);
    clock.advance(1);
    const second = await readHealthView(deps, rollout, 'default', BUILD, records, verified, undefined);
    expect(second).not.toBe(first);
    expect(deps.health.requests).toBe(2);
    expect((await t.stats()).requests.byEndpoint.health).toBe(2);
    // A build before 19.308-2 asks nothing.
    clock.advance(MIN);
    expect(
      await readHealthView(deps, rollout, 'default', '19.300-7', records, verified, undefined),
    ).toBeUndefined();
    expect((await t.stats()).requests.byEndpoint.health).toBe(2);
  });

  it('an account that answers 403 has none: off for the organization, said once', async () => {
    const t = await startTestSimulator(testFleet({ behaviour: { healthEvents: { available: false } } }));
    const { client } = createTestClient(t.sim.baseUrl);
    const clock = createManualClock(Date.UTC(2026, 10, 29));
    const log = captureLogger('warn');
    const deps = { api: client, clock, logger: log.logger, health: newHealthMemory() };
    for (let i = 0; i < 3; i++) {
      expect(await readHealthView(deps, rollout, 'default', BUILD, records, verified, undefined)).toEqual({
        kind: 'off',
      });
      clock.advance(2 * MIN);
    }
    expect(log.lines().map((l) => l.msg)).toEqual([
      'the account answers no health events: verification by heartbeat only',
    ]);
    expect((await t.stats()).requests.byEndpoint.health).toBe(1);
    expect(log.text()).not.toMatch(/ops-secret/);
  });
});
