/**
 * The client's health-event reads against the simulator over HTTP (issue #32): pages with a
 * continuation token, the events of named resources, hexadecimal ids read as the decimal ids of
 * the upgrade endpoints, a 403 (no health events on the account) as a `permission` ApiError, a
 * protocol error naming the field for an id that is not one, and the read from the budget's
 * least urgent share.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  ApiError,
  createCollectorUpgradeClient,
  type HttpTransport,
  type RequestBudget,
} from '../../../src/api/index.js';
import { REQUEST_PRIORITY } from '../../../src/api/request-budget.js';
import { toHexId } from '../../../src/lib/hex-id.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { OPS, startTestSimulator, stopTestSimulators, testFleet } from '../../support/simulator.js';

afterEach(async () => {
  await closeTestClients();
  await stopTestSimulators();
});

const NOISY = testFleet({
  generate: { count: 250, seed: 4, offlineRatio: 0 },
  behaviour: { healthEvents: { noiseRatio: 0.4 } },
});

describe('healthEvents', () => {
  it('walks the account list page by page; each event names its Collector by the decimal id', async () => {
    const t = await startTestSimulator(NOISY);
    const { client, operations } = createTestClient(t.sim.baseUrl);
    const sims = new Map((await t.simCollectors()).map((c) => [c.id, c]));
    const seen: number[] = [];
    let token: string | undefined;
    let pages = 0;
    do {
      const page = await client.healthEvents({ limit: 25, ...(token ? { token } : {}) });
      pages++;
      for (const e of page.events) {
        if (e.collectorId === undefined) throw new Error(`event ${e.eventId} names no Collector`);
        expect(sims.has(e.collectorId), `collector ${e.collectorId}`).toBe(true);
        expect(e).toMatchObject({
          severity: expect.stringMatching(/^(Error|Warning)$/),
          trackerId: expect.any(String),
        });
        expect(Number.isFinite(e.eventTime)).toBe(true);
        seen.push(e.collectorId);
      }
      token = page.next ?? undefined;
    } while (token && pages < 50);
    expect(seen.length).toBeGreaterThan(50);
    expect(pages).toBe(Math.ceil(seen.length / 25));
    expect(new Set(seen).size).toBe(seen.length);
    expect(operations.filter((o) => o.endpoint === 'health')).toHaveLength(pages);
    // The default page holds them all: one request.
    const all = await client.healthEvents();
    expect(all.events.map((e) => e.collectorId)).toEqual(seen);
    expect(all.next).toBeNull();

    // The events of named resources: the Collector's hexadecimal id gives back its decimal one.
    const some = seen.slice(0, 3);
    const of = await client.healthEvents({
      resources: some.map((id) => ({ id: toHexId(id), name: `c${id}`, type: 'Collector' as const })),
    });
    expect(of.events.map((e) => e.collectorId).sort()).toEqual([...some].sort());
  });

  it('a 403 is a permission error; an id that is not one is a protocol error naming the field', async () => {
    const off = await startTestSimulator(testFleet({ behaviour: { healthEvents: { available: false } } }));
    const { client } = createTestClient(off.sim.baseUrl);
    const err = await client.healthEvents().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect(err).toMatchObject({ kind: 'permission', status: 403, endpoint: 'health' });

    const bad = createCollectorUpgradeClient({
      config: { baseUrl: 'http://127.0.0.1:9/api/v1', accessId: OPS.accessId, accessKey: OPS.accessKey },
      retry: { maxAttempts: 1 },
      transport: {
        send: async () => ({
          status: 200,
          headers: {},
          contentType: 'application/json',
          text: JSON.stringify({
            data: [
              {
                eventId: 'x',
                severityLevel: 'Error',
                eventTime: '2026-11-29T01:00:00Z',
                details: { trackerId: 'FileCollectionBroken' },
                resourceIdentity: { id: 'not-hex', type: 'Collector' },
              },
            ],
            next: null,
          }),
        }),
        close: async () => {},
      } satisfies HttpTransport,
    });
    const protocol = await bad.healthEvents().catch((e: unknown) => e);
    expect(protocol).toMatchObject({ kind: 'protocol' });
    expect((protocol as Error).message).toMatch(/resourceIdentity\.id: expected a hexadecimal id/);
    await bad.close();
  });

  it('asks the budget at the least urgent priority', async () => {
    const t = await startTestSimulator(NOISY);
    const priorities: (number | undefined)[] = [];
    const budget: RequestBudget = {
      acquire: async (_signal, priority) => {
        priorities.push(priority);
        return { waitedMs: 0, sent() {}, async release() {} };
      },
      async rateLimited() {},
      factor: async () => 1,
      async close() {},
    };
    const client = createCollectorUpgradeClient({
      config: { baseUrl: t.sim.baseUrl, accessId: OPS.accessId, accessKey: OPS.accessKey },
      budget,
    });
    await client.healthEvents();
    await client.listTargets();
    expect(priorities).toEqual([REQUEST_PRIORITY.health, REQUEST_PRIORITY.targets]);
    // Behind every other request of the rollouts; only the inventory (no rollout's) comes after it.
    const { health, inventory, ...rollouts } = REQUEST_PRIORITY;
    expect(health).toBeGreaterThan(Math.max(...Object.values(rollouts)));
    expect(inventory).toBeGreaterThan(health);
    await client.close();
  });
});
