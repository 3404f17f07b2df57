/**
 * Faults an organization suffers, from its fleet file's `faults.schedule` or switched at run time
 * (/_sim/faults): outage (503, or the connection reset), unauthorized (401, HTML for a share),
 * rateLimitStorm (429 in the newer shape), slow (added latency), malformed (200 bodies that do
 * not match the interface). One organization fails while the other answers normally; each
 * refused or altered request is counted in the organization's `faults`.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  CollectorList,
  expectLegacyError,
  expectRateLimited,
  OPS,
  parse,
  startTestSimulator,
  stopTestSimulators,
  Targets,
  type TestSimulator,
  testFleet,
  tick,
} from '../../support/simulator.js';
import { GLOBEX, sim, startOrgsSimulator, twoOrgs } from './orgs-fixture.js';

afterEach(stopTestSimulators);

const targets = (t: TestSimulator, auth = OPS) => t.api('GET', 'collectors/upgrades/targets', { auth });

async function faultCounts(t: TestSimulator, org: string): Promise<Record<string, number>> {
  const res = await sim(t, 'GET', `/_sim/stats?org=${org}`);
  return (res.json as { faults: Record<string, number> }).faults;
}

async function switchOn(t: TestSimulator, org: string, fault: Record<string, unknown>) {
  const res = await sim(t, 'POST', `/_sim/faults?org=${org}`, fault);
  expect(res.status, res.text).toBe(201);
  return res.json as { faults: { kind: string; source: string; since: number; until: number | null }[] };
}

describe('outage', () => {
  it('scheduled: acme answers 503 service.unavailable within its window only; globex is fine throughout', async () => {
    const t = await startOrgsSimulator(
      twoOrgs({ faults: { schedule: [{ kind: 'outage', from: 60, for: 120 }] } }),
    );
    expect((await targets(t)).status).toBe(200);
    t.clock.advance(60_000);
    expectLegacyError(await targets(t), 503, 'service.unavailable');
    expectLegacyError(await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }), 503);
    expect((await targets(t, GLOBEX)).status).toBe(200);
    t.clock.advance(120_000);
    expect((await targets(t)).status).toBe(200);
    expect(await faultCounts(t, 'acme')).toMatchObject({ outage: 2 });
    expect(await faultCounts(t, 'globex')).toMatchObject({ outage: 0 });
    // Nothing was done while it was out.
    expect((await sim(t, 'GET', '/_sim/stats?org=acme')).json).toMatchObject({ tasksCreated: 0 });
  });

  it('mode refuse: the connection is reset without an answer', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'outage', mode: 'refuse' });
    await expect(targets(t)).rejects.toThrow();
    expect((await targets(t, GLOBEX)).status).toBe(200);
    expect(await faultCounts(t, 'acme')).toMatchObject({ outage: 1 });
  });

  it('comes before authentication: even a wrong key answers 503', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'outage' });
    expectLegacyError(await targets(t, { ...OPS, accessKey: 'wrong' }), 503, 'service.unavailable');
  });
});

describe('unauthorized', () => {
  it('valid credentials answer 401 unauthorized until the fault ends; globex is fine', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'unauthorized' });
    expectLegacyError(await targets(t), 401, 'unauthorized');
    expect((await targets(t, GLOBEX)).status).toBe(200);
    const ended = await sim(t, 'DELETE', '/_sim/faults?org=acme');
    expect(ended.json).toMatchObject({ faults: [], ended: [{ kind: 'unauthorized', source: 'runtime' }] });
    expect((await targets(t)).status).toBe(200);
    expect(await faultCounts(t, 'acme')).toMatchObject({ unauthorized: 1 });
  });

  it('as an HTML page for the htmlUnauthorizedRatio share', async () => {
    const t = await startOrgsSimulator(twoOrgs({ faults: { htmlUnauthorizedRatio: 1 } }));
    await switchOn(t, 'acme', { kind: 'unauthorized' });
    const res = await targets(t);
    expect(res.status).toBe(401);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.json).toBeUndefined();
  });
});

describe('rateLimitStorm', () => {
  it('ratio 1: every request 429 in the newer error shape, not counted as rateLimited', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'rateLimitStorm', ratio: 1 });
    for (let i = 0; i < 5; i++) expectRateLimited(await targets(t));
    expect((await targets(t, GLOBEX)).status).toBe(200);
    const stats = (await sim(t, 'GET', '/_sim/stats?org=acme')).json as { rateLimited: number };
    expect(stats.rateLimited).toBe(0);
    expect(await faultCounts(t, 'acme')).toMatchObject({ rateLimitStorm: 5 });
  });

  it('the default ratio is 0.9: about nine requests in ten are refused', async () => {
    const t = await startOrgsSimulator();
    const listed = await switchOn(t, 'acme', { kind: 'rateLimitStorm' });
    expect(listed.faults).toMatchObject([{ kind: 'rateLimitStorm', ratio: 0.9 }]);
    let refused = 0;
    for (let i = 0; i < 200; i++) if ((await targets(t)).status === 429) refused++;
    expect(refused).toBeGreaterThan(160);
    expect(refused).toBeLessThan(196);
  });
});

describe('slow', () => {
  it('a request is not answered until latencyMs of simulated time has passed', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'slow', latencyMs: 5000 });
    let answered = false;
    const pending = targets(t).then((r) => {
      answered = true;
      return r;
    });
    expect((await targets(t, GLOBEX)).status).toBe(200);
    await tick(30);
    t.clock.advance(4000);
    await tick(30);
    expect(answered).toBe(false);
    t.clock.advance(1000);
    expect((await pending).status).toBe(200);
    expect(await faultCounts(t, 'acme')).toMatchObject({ slow: 1 });
  });
});

describe('malformed', () => {
  it('truncated: a 200 whose JSON body is cut short', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'malformed', ratio: 1, shape: 'truncated' });
    const res = await targets(t);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.json).toBeUndefined();
    expect(res.text.length).toBeGreaterThan(0);
  });

  it('html: a 200 carrying an HTML page', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'malformed', ratio: 1, shape: 'html' });
    const res = await t.api('GET', 'collectors/upgrades/collectors');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/text\/html/);
    expect(res.text).toMatch(/<html/);
  });

  it('types: a 200 whose fields have the wrong types', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'malformed', ratio: 1, shape: 'types' });
    const list = await t.api('GET', 'collectors/upgrades/collectors');
    expect(list.status).toBe(200);
    expect(CollectorList.safeParse(list.json).success).toBe(false);
    expect((list.json as { collectors: { id: unknown }[] }).collectors[0]?.id).toBeTypeOf('string');
    expect(Targets.safeParse((await targets(t)).json).success).toBe(false);
    // An empty list cannot hold a wrong type: it comes as a string.
    const none = await t.api('GET', 'collectors/upgrades/collectors?offset=999');
    expect((none.json as { collectors: unknown }).collectors).toBe('[]');
  });

  it('only 200 answers: a create (202) and errors keep their bodies; globex is untouched', async () => {
    const t = await startOrgsSimulator();
    await switchOn(t, 'acme', { kind: 'malformed', ratio: 1 });
    const created = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    expect(created.status).toBe(202);
    expect(created.json).toMatchObject({ id: expect.any(String) });
    expectLegacyError(await t.api('GET', 'collectors/upgrades/987654'), 404, 'notfound');
    expect(Targets.safeParse((await targets(t, GLOBEX)).json).success).toBe(true);
    expect(await faultCounts(t, 'acme')).toMatchObject({ malformed: 0 });
    await targets(t);
    expect(await faultCounts(t, 'acme')).toMatchObject({ malformed: 1 });
  });
});

describe('/_sim/faults', () => {
  it('GET lists the faults in force and the scheduled windows to come, with their times', async () => {
    const t = await startOrgsSimulator(
      twoOrgs({
        faults: {
          schedule: [
            { kind: 'slow', from: 0, for: 60, latencyMs: 10 },
            { kind: 'outage', from: 300 },
          ],
        },
      }),
    );
    const start = t.clock.now();
    const res = await sim(t, 'GET', '/_sim/faults?org=acme');
    expect(res.json).toEqual({
      org: 'acme',
      now: start,
      faults: [{ kind: 'slow', latencyMs: 10, source: 'schedule', since: start, until: start + 60_000 }],
      upcoming: [
        { kind: 'outage', mode: 'unavailable', source: 'schedule', since: start + 300_000, until: null },
      ],
    });
    expect(((await sim(t, 'GET', '/_sim/faults?org=globex')).json as { faults: unknown[] }).faults).toEqual(
      [],
    );
  });

  it('POST with forSeconds: in force for that long, then gone', async () => {
    const t = await startOrgsSimulator();
    const on = await switchOn(t, 'acme', { kind: 'outage', forSeconds: 30 });
    expect(on.faults).toMatchObject([{ kind: 'outage', source: 'runtime', until: t.clock.now() + 30_000 }]);
    expect((await targets(t)).status).toBe(503);
    t.clock.advance(30_000);
    expect((await targets(t)).status).toBe(200);
    expect(((await sim(t, 'GET', '/_sim/faults?org=acme')).json as { faults: unknown[] }).faults).toEqual([]);
  });

  it('DELETE &kind= ends that kind only, a scheduled window included; later windows keep their turn', async () => {
    const t = await startOrgsSimulator(
      twoOrgs({
        faults: {
          schedule: [
            { kind: 'outage', from: 0, for: 60 },
            { kind: 'outage', from: 120, for: 60 },
          ],
        },
      }),
    );
    await switchOn(t, 'acme', { kind: 'rateLimitStorm', ratio: 0 });
    const res = await sim(t, 'DELETE', '/_sim/faults?org=acme&kind=outage');
    expect(res.json).toMatchObject({
      ended: [{ kind: 'outage', source: 'schedule' }],
      faults: [{ kind: 'rateLimitStorm' }],
    });
    expect((await sim(t, 'GET', '/_sim/faults?org=acme')).json).toMatchObject({
      upcoming: [{ kind: 'outage' }],
    });
    expect((await targets(t)).status).toBe(200);
    t.clock.advance(120_000);
    expect((await targets(t)).status).toBe(503);
  });

  it('a runtime fault wins over a scheduled one of its kind; a second POST replaces the first', async () => {
    const t = await startOrgsSimulator(
      twoOrgs({ faults: { schedule: [{ kind: 'rateLimitStorm', from: 0, ratio: 1 }] } }),
    );
    await switchOn(t, 'acme', { kind: 'rateLimitStorm', ratio: 0 });
    expect((await targets(t)).status).toBe(200);
    const listed = await switchOn(t, 'acme', { kind: 'rateLimitStorm', ratio: 1 });
    expect(listed.faults.filter((f) => f.source === 'runtime')).toHaveLength(1);
    expect((await targets(t)).status).toBe(429);
  });

  it.each([
    ['POST', '/_sim/faults?org=acme', { kind: 'earthquake' }, /kind must be one of outage/],
    ['POST', '/_sim/faults?org=acme', { kind: 'slow', latencyMs: -1 }, /latencyMs/],
    ['POST', '/_sim/faults?org=acme', { kind: 'outage', mode: 'sometimes' }, /mode/],
    ['POST', '/_sim/faults?org=acme', { kind: 'malformed', ratio: 2 }, /ratio/],
    ['DELETE', '/_sim/faults?org=acme&kind=earthquake', undefined, /kind must be one of/],
  ])('%s %s %j: 400', async (method, path, body, message) => {
    const t = await startOrgsSimulator();
    const res = await sim(t, method, path, body);
    expect(res.status, res.text).toBe(400);
    expect((res.json as { error: string }).error).toMatch(message);
  });

  it('one organization: /_sim/faults needs no org', async () => {
    const t = await startTestSimulator(testFleet());
    expect((await sim(t, 'POST', '/_sim/faults', { kind: 'outage' })).status).toBe(201);
    expectLegacyError(await targets(t), 503, 'service.unavailable');
    expect((await sim(t, 'DELETE', '/_sim/faults')).status).toBe(200);
    expect((await targets(t)).status).toBe(200);
    expect(parse(Targets, (await targets(t)).json).targets.length).toBeGreaterThan(0);
  });
});
