/**
 * The Health Events API of the simulator (issue #32), over real HTTP on a manual clock: the
 * documented event shape with 16-digit hexadecimal ids, pages with a continuation token (null on
 * the last), events of named resources, a build that breaks collection some time after the
 * upgrade while the Collector stays alive, the break resolving when it leaves the build, noise
 * from before the start, no event from builds older than 19.308-2, the same rate limit, and 403
 * for an account without health events.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromHexId, toHexId } from '../../../src/lib/hex-id.js';
import {
  C,
  HEARTBEAT_SECONDS,
  ISSUE_SECONDS,
  LATEST,
  NewerError,
  parse,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const S = 1000;
const DONE_MS = (ISSUE_SECONDS + HEARTBEAT_SECONDS + UPGRADE_SECONDS) * S + 1;
const HEX = /^[0-9A-F]{16}$/;

const HealthEvent = z.strictObject({
  eventId: z.string().regex(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/),
  eventName: z.literal('TrackerUnHealthy'),
  eventType: z.literal('Health-Change'),
  status: z.literal('UnHealthy'),
  severityLevel: z.enum(['Error', 'Warning']),
  subsystem: z.literal('Collection'),
  eventTime: z.iso.datetime(),
  details: z.strictObject({ trackerId: z.string().min(1), name: z.string().min(1), description: z.string() }),
  resourceIdentity: z.strictObject({
    collectorId: z.string().regex(HEX),
    collectorName: z.string(),
    id: z.string().regex(HEX),
    name: z.string(),
    type: z.enum(['Collector', 'Source']),
  }),
});
const Page = z.strictObject({ data: z.array(HealthEvent), next: z.string().min(1).nullable() });
type HealthEvent = z.infer<typeof HealthEvent>;

async function allEvents(t: TestSimulator, limit: number): Promise<{ events: HealthEvent[]; pages: number }> {
  const events: HealthEvent[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const q: string = `healthEvents?limit=${limit}${token ? `&token=${encodeURIComponent(token)}` : ''}`;
    const res = await t.api('GET', q);
    expect(res.status, res.text).toBe(200);
    const page = parse(Page, res.json);
    expect(page.data.length).toBeLessThanOrEqual(limit);
    events.push(...page.data);
    token = page.next;
    pages++;
  } while (token !== null && pages < 100);
  return { events, pages };
}

const collectorOf = (e: HealthEvent) => fromHexId(e.resourceIdentity.collectorId);

describe('hexadecimal ids', () => {
  it('match the decimal ids of the upgrade endpoints both ways', () => {
    for (const id of [1, 100000001, 104964375, Number.MAX_SAFE_INTEGER]) {
      expect(toHexId(id)).toMatch(HEX);
      expect(fromHexId(toHexId(id))).toBe(id);
      expect(fromHexId(toHexId(id).toLowerCase())).toBe(id);
    }
    expect(toHexId(104964375)).toBe('000000000641A117');
    expect(fromHexId('000000000641A117')).toBe(104964375);
    for (const bad of ['', 'xyz', '0x10', '1'.repeat(17), 'FFFFFFFFFFFFFFFF'])
      expect(fromHexId(bad)).toBeUndefined();
  });
});

describe('GET healthEvents', () => {
  it('lists the noise from before the start in pages, in the documented shape; none from builds before 19.308-2', async () => {
    const t = await startTestSimulator(testFleet({ behaviour: { healthEvents: { noiseRatio: 1 } } }));
    const { events, pages } = await allEvents(t, 2);
    const sims = await t.simCollectors();
    // Every installed Collector on 19.308-2 or later has one; old-1 (19.100-1) sends none.
    const sending = sims.filter((c) => c.type === 'Installable' && c.version !== '19.100-1').map((c) => c.id);
    expect(events.map(collectorOf).sort()).toEqual([...sending].sort());
    expect(events.map(collectorOf)).not.toContain(C.old);
    expect(pages).toBe(Math.ceil(events.length / 2));
    for (const e of events) expect(Date.parse(e.eventTime)).toBeLessThan(t.clock.now() - 3600 * S + 1);
    // One page holds them all when the limit allows; a bad token is refused in the newer shape.
    expect((await allEvents(t, 1000)).pages).toBe(1);
    const bad = await t.api('GET', 'healthEvents?limit=5&token=bm90LW91cnM');
    expect(bad.status).toBe(400);
    parse(NewerError, bad.json);
  });

  it('a build that breaks collection: raised after the delay while the Collector stays alive, resolved when it leaves the build', async () => {
    const t = await startTestSimulator(
      testFleet({
        behaviour: {
          healthEvents: { breaks: [{ build: LATEST, ratio: 1, osName: 'Linux', afterSeconds: 60 }] },
        },
      }),
    );
    const start = t.clock.now();
    await t.createTask(C.web1, LATEST);
    t.at(start, DONE_MS);
    expect((await t.simCollector(C.web1)).version).toBe(LATEST);
    expect((await allEvents(t, 100)).events).toEqual([]);
    t.at(start, DONE_MS + 61 * S);
    const [event, ...more] = (await allEvents(t, 100)).events;
    expect(more).toEqual([]);
    expect(event?.details.trackerId).toBe('FileCollectionBroken');
    expect(event?.severityLevel).toBe('Error');
    expect(collectorOf(event as HealthEvent)).toBe(C.web1);
    expect(event?.resourceIdentity.type).toBe('Source');
    expect(Date.parse(event?.eventTime ?? '')).toBeGreaterThan(start + DONE_MS);
    const truth = await fetch(`${t.sim.url}/_sim/collectors/${C.web1}`).then((r) => r.json());
    expect(truth).toMatchObject({ alive: true, running: true, collecting: false });
    // The events of named resources: the Collector's hexadecimal id names its Source's event.
    const of = await t.api('POST', 'healthEvents/resources?limit=10', {
      body: { data: [{ id: toHexId(C.web1), name: 'web-1', type: 'Collector' }] },
    });
    expect(parse(Page, of.json).data.map((e) => e.eventId)).toEqual([event?.eventId]);
    const other = await t.api('POST', 'healthEvents/resources', {
      body: { data: [{ id: toHexId(C.web2), name: 'web-2', type: 'Collector' }] },
    });
    expect(parse(Page, other.json).data).toEqual([]);
    const bad = await t.api('POST', 'healthEvents/resources', {
      body: { data: [{ id: 12, type: 'Collector' }] },
    });
    expect(bad.status).toBe(400);
    // Back on its previous build: the break resolves and it collects again.
    const back = t.clock.now();
    await t.createTask(C.web1, '19.400-5');
    t.at(back, DONE_MS);
    expect((await allEvents(t, 100)).events).toEqual([]);
    const after = (await fetch(`${t.sim.url}/_sim/collectors/${C.web1}`).then((r) => r.json())) as {
      collecting: boolean;
      version: string;
      health: { events: { resolvedAt: number | null; cause: string }[] };
    };
    expect(after.version).toBe('19.400-5');
    expect(after.collecting).toBe(true);
    expect(after.health.events).toMatchObject([{ cause: 'break' }]);
    const resolvedAt = after.health.events[0]?.resolvedAt ?? 0;
    expect(resolvedAt).toBeGreaterThan(back);
    expect(resolvedAt).toBeLessThan(back + DONE_MS);
  });

  it('a break due after the Collector left the build was raised and resolved then: never listed', async () => {
    const t = await startTestSimulator(
      testFleet({
        behaviour: { healthEvents: { breaks: [{ build: LATEST, ratio: 1, afterSeconds: 600 }] } },
      }),
    );
    const start = t.clock.now();
    await t.createTask(C.web1, LATEST);
    t.at(start, DONE_MS);
    await t.createTask(C.web1, '19.400-5');
    t.at(start, 2 * DONE_MS + 3600 * S);
    expect((await allEvents(t, 100)).events).toEqual([]);
    const summary = (await fetch(`${t.sim.url}/_sim/health`).then((r) => r.json())) as { breaks: number };
    expect(summary.breaks).toBe(0);
  });

  it('answers 403 where the account has no health events, and shares the rate limit', async () => {
    const off = await startTestSimulator(testFleet({ behaviour: { healthEvents: { available: false } } }));
    const res = await off.api('GET', 'healthEvents');
    expect(res.status).toBe(403);
    expect(parse(NewerError, res.json).errors[0]?.code).toBe('forbidden');
    const limited = await startTestSimulator(
      testFleet({ faults: { rateLimit: { perSecond: 1, concurrent: 0 } } }),
    );
    expect((await limited.api('GET', 'collectors/upgrades/targets')).status).toBe(200);
    expect((await limited.api('GET', 'healthEvents')).status).toBe(429);
    expect((await limited.stats()).requests.byEndpoint.health).toBe(1);
  });
});
