/**
 * Conformance: 4.3 Create an upgrade or downgrade task (POST collectors/upgrades), the creation
 * result of 2.4, the five 400 codes of section 7 and the permission rule of section 5.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  CreateResult,
  expectLegacyError,
  HEARTBEAT_SECONDS,
  INTERN,
  ISSUE_SECONDS,
  LATEST,
  OPS,
  parse,
  startTestSimulator,
  stopTestSimulators,
  TIMEOUT_SECONDS,
  testFleet,
  UPGRADE_SECONDS,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

const DONE_MS = (ISSUE_SECONDS + HEARTBEAT_SECONDS + UPGRADE_SECONDS + 5) * 1000;

describe('4.3 response 202: the task creation result of 2.4', () => {
  it('2.4: exactly id (string) and link {rel: "self", href: /v1/collectors/upgrades/<id>}', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', {
      body: { collectorId: C.web1, toVersion: LATEST },
    });
    expect(res.status, res.text).toBe(202);
    const body = parse(CreateResult, res.json);
    expect(Object.keys(body).sort()).toEqual(['id', 'link']);
    expect(typeof body.id).toBe('string');
    expect(body.id).toMatch(/^\d+$/);
    expect(body.link).toEqual({ rel: 'self', href: `/v1/collectors/upgrades/${body.id}` });
  });

  it('the id reads the task at 4.4, where it is the same number', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1, LATEST);
    const task = await t.task(id);
    expect(task.id).toBe(Number(id));
    expect(task.collectorId).toBe(C.web1);
    expect(task.toVersion).toBe(LATEST);
  });

  it("the link href, resolved against the base URL's /v1, reads the task too", async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    const { link } = parse(CreateResult, res.json);
    const status = await t.raw('GET', `/api${link.href}`, {
      auth: { accessId: 'ops', accessKey: 'ops-secret' },
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expect(status.status, status.text).toBe(200);
  });

  it('every task gets its own id', async () => {
    const t = await startTestSimulator();
    const a = await t.createTask(C.web1);
    const b = await t.createTask(C.web2);
    const c = await t.createTask(C.old);
    expect(new Set([a, b, c]).size).toBe(3);
  });

  it('toVersion omitted: the task goes to the latest build', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    expect((await t.task(id)).toVersion).toBe(LATEST);
  });

  it('toVersion given: the task goes to that build (upgrade and downgrade alike)', async () => {
    const t = await startTestSimulator();
    expect((await t.task(await t.createTask(C.web1, '19.450-12'))).toVersion).toBe('19.450-12');
    expect((await t.task(await t.createTask(C.upToDate, '19.300-7'))).toVersion).toBe('19.300-7');
  });

  it('requestTime is the simulated now in ms at creation', async () => {
    const t = await startTestSimulator();
    t.clock.advance(12_345);
    const now = t.clock.now();
    const id = await t.createTask(C.web1);
    expect((await t.task(id)).requestTime).toBe(now);
  });

  it("a created task shows in the Collector's task history (/_sim/collectors)", async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1, '19.450-12');
    const c = await t.simCollector(C.web1);
    expect(c.tasks.map((x) => String(x.id))).toEqual([id]);
    expect(c.tasks[0]?.toVersion).toBe('19.450-12');
  });
});

describe('4.3 response 400 collector.invalid', () => {
  it('the Collector identifier was not provided', async () => {
    const t = await startTestSimulator();
    expectLegacyError(await t.api('POST', 'collectors/upgrades', { body: {} }), 400, 'collector.invalid');
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { toVersion: LATEST } }),
      400,
      'collector.invalid',
    );
  });

  it('the Collector does not exist', async () => {
    const t = await startTestSimulator();
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: 555 } }),
      400,
      'collector.invalid',
    );
  });

  it('5: the user has no permission to use the Collector', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web2 }, auth: INTERN });
    expectLegacyError(res, 400, 'collector.invalid');
    expect((await t.simCollector(C.web2)).tasks).toEqual([]);
    // ...while the same user may use its own Collector.
    await t.createTask(C.web1, undefined, INTERN);
  });

  it("a user without permission cannot tell a hidden Collector's state: Hosted or offline ones answer collector.invalid too", async () => {
    const t = await startTestSimulator();
    for (const collectorId of [C.hosted, C.offline]) {
      const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId }, auth: INTERN });
      expectLegacyError(res, 400, 'collector.invalid');
    }
  });
});

describe('403 forbidden (api-facts: a key that lacks the capability)', () => {
  it('a user whose key may not create tasks gets 403 forbidden in the legacy shape, and no task', async () => {
    const reader = { accessId: 'reader', accessKey: 'reader-secret' };
    const t = await startTestSimulator(testFleet({ users: [{ ...OPS }, { ...reader, canCreate: false }] }));
    const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 }, auth: reader });
    expectLegacyError(res, 403, 'forbidden');
    expect((await t.simCollector(C.web1)).tasks).toEqual([]);
    // It may still read: the listing answers 200.
    expect((await t.api('GET', 'collectors/upgrades/collectors?limit=5', { auth: reader })).status).toBe(200);
    await t.createTask(C.web1, undefined, OPS);
  });
});

describe('4.3 response 400 collector.type.invalid', () => {
  it('the Collector is a Hosted Collector', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', {
      body: { collectorId: C.hosted, toVersion: LATEST },
    });
    expectLegacyError(res, 400, 'collector.type.invalid');
    expect((await t.simCollector(C.hosted)).tasks).toEqual([]);
  });
});

describe('4.3 response 400 collector.not.alive', () => {
  it('the Collector is not running', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } });
    expectLegacyError(res, 400, 'collector.not.alive');
    expect((await t.simCollector(C.offline)).tasks).toEqual([]);
  });

  it('a Collector set offline while running is refused, and accepted again once back', async () => {
    const t = await startTestSimulator();
    const patch = await t.raw('PATCH', `/_sim/collectors/${C.web1}`, {
      body: { alive: false },
      headers: { 'content-type': 'application/json' },
    });
    expect(patch.status, patch.text).toBe(200);
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }),
      400,
      'collector.not.alive',
    );
    await t.raw('PATCH', `/_sim/collectors/${C.web1}`, {
      body: { alive: true },
      headers: { 'content-type': 'application/json' },
    });
    await t.createTask(C.web1);
  });
});

describe('4.3 response 400 collector.in.upgrading', () => {
  it('the Collector has an unfinished task: a second task is refused, whatever its target', async () => {
    const t = await startTestSimulator();
    await t.createTask(C.web1);
    for (const toVersion of [undefined, LATEST, '19.300-7']) {
      const body = toVersion ? { collectorId: C.web1, toVersion } : { collectorId: C.web1 };
      expectLegacyError(await t.api('POST', 'collectors/upgrades', { body }), 400, 'collector.in.upgrading');
    }
    expect((await t.simCollector(C.web1)).tasks).toHaveLength(1);
  });

  it('refused in every unfinished state (0, 1, 6), accepted once the task succeeded', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1, '19.450-12');
    const { requestTime } = await t.task(id);
    // 0 at the request, 1 just after issueSeconds, 6 once the next heartbeat has surely come.
    const points: [number, number][] = [
      [0, 0],
      [ISSUE_SECONDS * 1000 + 1, 1],
      [(ISSUE_SECONDS + HEARTBEAT_SECONDS) * 1000 + 1, 6],
    ];
    for (const [ms, expected] of points) {
      t.at(requestTime, ms);
      expect((await t.task(id)).status, `status at +${ms} ms`).toBe(expected);
      expectLegacyError(
        await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }),
        400,
        'collector.in.upgrading',
      );
    }
    t.at(requestTime, DONE_MS);
    expect((await t.task(id)).status).toBe(2);
    await t.createTask(C.web1);
  });

  it('accepted again after a failed task', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.failing);
    const { requestTime } = await t.task(id);
    t.at(requestTime, DONE_MS);
    expect((await t.task(id)).status).toBe(3);
    await t.createTask(C.failing);
  });

  it('a stuck task keeps the Collector in upgrading until its time-out', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.stuck);
    const { requestTime } = await t.task(id);
    t.at(requestTime, (TIMEOUT_SECONDS - 1) * 1000);
    expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.stuck } }),
      400,
      'collector.in.upgrading',
    );
    t.at(requestTime, (TIMEOUT_SECONDS + 1) * 1000);
    expect((await t.task(id)).status).toBe(3);
    await t.createTask(C.stuck);
  });
});

describe('4.3 response 400 collector.version.invalid', () => {
  const cases: [string, unknown][] = [
    ['empty (public clients send "" when no version was chosen)', ''],
    ['malformed', 'abc'],
    ['malformed (no build part)', '19.470'],
    ['malformed (surrounding spaces)', ' 19.470-4 '],
    ['not a string', 19.47],
    ['unknown build', '19.999-1'],
  ];
  for (const [what, toVersion] of cases) {
    it(`toVersion ${what}`, async () => {
      const t = await startTestSimulator();
      const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1, toVersion } });
      expectLegacyError(res, 400, 'collector.version.invalid');
      expect((await t.simCollector(C.web1)).tasks).toEqual([]);
    });
  }
});

describe('4.3 response 400: legacy error body', () => {
  it('{status, id, code, message}: status repeats the HTTP status, id is a request id, message explains', async () => {
    const t = await startTestSimulator();
    const body = expectLegacyError(
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } }),
      400,
      'collector.not.alive',
    );
    expect(body.message.length).toBeGreaterThan(0);
  });

  it('every error carries its own request id', async () => {
    const t = await startTestSimulator();
    const a = expectLegacyError(await t.api('POST', 'collectors/upgrades', { body: {} }), 400);
    const b = expectLegacyError(await t.api('POST', 'collectors/upgrades', { body: {} }), 400);
    expect(a.id).not.toBe(b.id);
  });

  it('a body that is not JSON is a client error (400), and no task is created', async () => {
    const t = await startTestSimulator();
    expectLegacyError(await t.api('POST', 'collectors/upgrades', { rawBody: '{"collectorId": 101' }), 400);
    expect((await t.simCollector(C.web1)).tasks).toEqual([]);
  });

  it('rejections are counted by code in /_sim/stats', async () => {
    const t = await startTestSimulator();
    await t.api('POST', 'collectors/upgrades', { body: {} });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.hosted } });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } });
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1, toVersion: '' } });
    await t.createTask(C.web1);
    await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } });
    const stats = await t.stats();
    expect(stats.rejected).toMatchObject({
      'collector.invalid': 1,
      'collector.type.invalid': 1,
      'collector.not.alive': 2,
      'collector.version.invalid': 1,
      'collector.in.upgrading': 1,
    });
    expect(stats.tasksCreated).toBe(1);
  });
});
