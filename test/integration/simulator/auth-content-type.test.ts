/**
 * Conformance: section 5 (HTTP basic authentication, 401 unauthorized) and section 4's header
 * rule (415 contenttype.invalid when Content-Type is not application/json), with the lenient
 * mode for GETs without a Content-Type.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  type ApiOptions,
  type ApiResponse,
  basicAuth,
  C,
  expectLegacyError,
  INTERN,
  OPS,
  startTestSimulator,
  stopTestSimulators,
  type TestSimulator,
  testFleet,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

interface Endpoint {
  name: string;
  method: 'GET' | 'POST';
  /** Prepares what the call needs (a task for the status endpoint) and makes it. */
  call(t: TestSimulator, options: ApiOptions): Promise<ApiResponse>;
}

const ENDPOINTS: Endpoint[] = [
  {
    name: '4.1 GET collectors/upgrades/collectors',
    method: 'GET',
    call: (t, o) => t.api('GET', 'collectors/upgrades/collectors', o),
  },
  {
    name: '4.2 GET collectors/upgrades/targets',
    method: 'GET',
    call: (t, o) => t.api('GET', 'collectors/upgrades/targets', o),
  },
  {
    name: '4.3 POST collectors/upgrades',
    method: 'POST',
    call: (t, o) => t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 }, ...o }),
  },
  {
    name: '4.4 GET collectors/upgrades/<id>',
    method: 'GET',
    call: async (t, o) => {
      const id = await t.createTask(C.web2);
      return t.api('GET', `collectors/upgrades/${id}`, o);
    },
  },
];

const OK: Record<string, number> = { GET: 200, POST: 202 };

describe('5: HTTP basic authentication; missing or wrong credentials answer 401 unauthorized', () => {
  const bad: [string, string | null][] = [
    ['no Authorization header', null],
    ['a wrong access key', basicAuth({ accessId: OPS.accessId, accessKey: 'wrong' })],
    ["another user's access key", basicAuth({ accessId: OPS.accessId, accessKey: INTERN.accessKey })],
    ['an unknown access id', basicAuth({ accessId: 'nobody', accessKey: OPS.accessKey })],
    ['an empty basic pair', basicAuth({ accessId: '', accessKey: '' })],
    ['a basic value without a colon', `Basic ${Buffer.from('opsops-secret').toString('base64')}`],
    ['a basic value that is not base64', 'Basic %%%not-base64%%%'],
    ['another scheme (Bearer)', 'Bearer ops-secret'],
  ];
  for (const endpoint of ENDPOINTS) {
    for (const [what, auth] of bad) {
      it(`${endpoint.name}: ${what} → 401`, async () => {
        const t = await startTestSimulator();
        expectLegacyError(await endpoint.call(t, { auth }), 401, 'unauthorized');
      });
    }

    it(`${endpoint.name}: the right pair is accepted (${OK[endpoint.method]})`, async () => {
      const t = await startTestSimulator();
      const res = await endpoint.call(t, { auth: OPS });
      expect(res.status, res.text).toBe(OK[endpoint.method]);
    });
  }

  it('the scheme name is case-insensitive ("basic")', async () => {
    const t = await startTestSimulator();
    const auth = basicAuth(OPS).replace('Basic', 'basic');
    expect((await t.api('GET', 'collectors/upgrades/targets', { auth })).status).toBe(200);
  });

  it('an access key containing a colon is split at the first colon', async () => {
    const user = { accessId: 'colon', accessKey: 'se:cr:et' };
    const t = await startTestSimulator(testFleet({ users: [user] }));
    expect((await t.api('GET', 'collectors/upgrades/targets', { auth: user })).status).toBe(200);
  });

  it('a refused create creates no task', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 }, auth: null });
    expectLegacyError(res, 401, 'unauthorized');
    expect((await t.simCollector(C.web1)).tasks).toEqual([]);
  });

  it('faults.htmlUnauthorizedRatio 1: a 401 comes back as an HTML page, as on some real deployments', async () => {
    const t = await startTestSimulator(testFleet({ faults: { htmlUnauthorizedRatio: 1 } }));
    const res = await t.api('GET', 'collectors/upgrades/targets', { auth: null });
    expect(res.status).toBe(401);
    expect(String(res.headers['content-type'])).toMatch(/^text\/html/);
    expect(res.json).toBeUndefined();
    expect(res.text).toMatch(/<html/i);
  });
});

describe('4: 415 contenttype.invalid when Content-Type is not application/json', () => {
  const wrong: [string, string | null][] = [
    ['missing', null],
    ['text/plain', 'text/plain'],
    ['application/xml', 'application/xml'],
    ['application/x-www-form-urlencoded', 'application/x-www-form-urlencoded'],
    ['application/jsonp', 'application/jsonp'],
    ['application/json-patch+json', 'application/json-patch+json'],
  ];
  for (const endpoint of ENDPOINTS) {
    for (const [what, value] of wrong) {
      it(`${endpoint.name}: Content-Type ${what} → 415`, async () => {
        const t = await startTestSimulator();
        const res = await endpoint.call(t, { headers: { 'content-type': value } });
        expectLegacyError(res, 415, 'contenttype.invalid');
      });
    }

    it(`${endpoint.name}: application/json with a charset parameter is accepted`, async () => {
      const t = await startTestSimulator();
      const res = await endpoint.call(t, { headers: { 'content-type': 'application/json; charset=utf-8' } });
      expect(res.status, res.text).toBe(OK[endpoint.method]);
    });
  }

  it('a create refused with 415 creates no task', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades', {
      body: { collectorId: C.web1 },
      headers: { 'content-type': 'text/plain' },
    });
    expectLegacyError(res, 415, 'contenttype.invalid');
    expect((await t.simCollector(C.web1)).tasks).toEqual([]);
  });
});

describe('lenient mode (--lenient-content-type): a GET without Content-Type is accepted', () => {
  for (const endpoint of ENDPOINTS) {
    if (endpoint.method === 'GET') {
      it(`${endpoint.name}: no Content-Type → 200`, async () => {
        const t = await startTestSimulator(testFleet(), { lenientContentType: true });
        const res = await endpoint.call(t, { headers: { 'content-type': null } });
        expect(res.status, res.text).toBe(200);
      });
    } else {
      it(`${endpoint.name}: no Content-Type on a POST → still 415`, async () => {
        const t = await startTestSimulator(testFleet(), { lenientContentType: true });
        const res = await endpoint.call(t, { headers: { 'content-type': null } });
        expectLegacyError(res, 415, 'contenttype.invalid');
      });
    }

    it(`${endpoint.name}: a wrong Content-Type → still 415`, async () => {
      const t = await startTestSimulator(testFleet(), { lenientContentType: true });
      const res = await endpoint.call(t, { headers: { 'content-type': 'text/plain' } });
      expectLegacyError(res, 415, 'contenttype.invalid');
    });
  }

  it('without the lenient mode the same GET is refused (the mode is what makes the difference)', async () => {
    const t = await startTestSimulator(testFleet(), { lenientContentType: false });
    const res = await t.api('GET', 'collectors/upgrades/targets', { headers: { 'content-type': null } });
    expectLegacyError(res, 415, 'contenttype.invalid');
  });
});
