/** Conformance: 4.4 Get upgrade task status (GET collectors/upgrades/<id>) and the task of 2.3. */
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  expectLegacyError,
  LATEST,
  parse,
  StatusBody,
  startTestSimulator,
  stopTestSimulators,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

describe('4.4 response 200: an object with the key "upgrade" holding the task of 2.3', () => {
  it('2.3: exactly id, collectorId, toVersion, requestTime, status, message with their types', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const res = await t.api('GET', `collectors/upgrades/${id}`);
    expect(res.status, res.text).toBe(200);
    const body = parse(StatusBody, res.json);
    expect(Object.keys(body)).toEqual(['upgrade']);
    expect(Object.keys(body.upgrade).sort()).toEqual(
      ['collectorId', 'id', 'message', 'requestTime', 'status', 'toVersion'].sort(),
    );
  });

  it('2.3: the values are those of the request; id is a number (a string only at creation)', async () => {
    const t = await startTestSimulator();
    const now = t.clock.now();
    const id = await t.createTask(C.web2, LATEST);
    const res = await t.api('GET', `collectors/upgrades/${id}`);
    expect(parse(StatusBody, res.json).upgrade).toEqual({
      id: Number(id),
      collectorId: C.web2,
      toVersion: LATEST,
      requestTime: now,
      status: 0,
      message: '',
    });
  });

  it('2.3 requestTime: milliseconds since the epoch, unchanged by later reads', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const first = await t.task(id);
    // A timestamp in ms (after 2001-09-09 in ms, which in seconds would be ~year 33658).
    expect(first.requestTime).toBeGreaterThan(1_000_000_000_000);
    t.clock.advance(60_000);
    expect((await t.task(id)).requestTime).toBe(first.requestTime);
  });

  it('each task is read by its own id', async () => {
    const t = await startTestSimulator();
    const a = await t.createTask(C.web1);
    const b = await t.createTask(C.web2, '19.300-7');
    expect((await t.task(a)).collectorId).toBe(C.web1);
    expect(await t.task(b)).toMatchObject({ collectorId: C.web2, toVersion: '19.300-7' });
  });
});

describe('4.4 response 404: the task identifier was not found or is invalid', () => {
  const ids = ['999999', '0', 'abc', '12abc', '-1', '1.5', '1e3', '99999999999999999999999'];
  for (const id of ids) {
    it(`unknown or malformed id "${id}" → 404 with the legacy error body`, async () => {
      const t = await startTestSimulator();
      await t.createTask(C.web1);
      expectLegacyError(await t.api('GET', `collectors/upgrades/${encodeURIComponent(id)}`), 404);
    });
  }

  it('an id one past the last created task is not found', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    expectLegacyError(await t.api('GET', `collectors/upgrades/${Number(id) + 1}`), 404);
  });
});
