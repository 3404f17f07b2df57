/**
 * Conformance: paths and methods. The base URL ends in /api/v1 (9), a trailing slash is accepted
 * (api-facts: some public clients add one), an unknown path answers 404 notfound and a known path
 * with the wrong method 405 method.unsupported; bodies are JSON.
 */
import { connect } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  C,
  CollectorList,
  CreateResult,
  expectLegacyError,
  OPS,
  parse,
  StatusBody,
  startTestSimulator,
  stopTestSimulators,
  Targets,
} from '../../support/simulator.js';

afterEach(stopTestSimulators);

describe('9: the base URL ends in /api/v1', () => {
  it('baseUrl is url + /api/v1 and answers there', async () => {
    const t = await startTestSimulator();
    expect(t.sim.baseUrl).toBe(`${t.sim.url}/api/v1`);
    expect(t.sim.url).toBe(`http://127.0.0.1:${t.sim.port}`);
    const res = await t.raw('GET', '/api/v1/collectors/upgrades/targets', {
      auth: OPS,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expect(res.status).toBe(200);
  });
});

describe('a trailing slash on a path is accepted', () => {
  it('4.1 GET collectors/upgrades/collectors/ (with a query too)', async () => {
    const t = await startTestSimulator();
    const res = await t.api('GET', 'collectors/upgrades/collectors/');
    expect(res.status, res.text).toBe(200);
    expect(parse(CollectorList, res.json).collectors.length).toBe(6);
    const page = await t.api('GET', 'collectors/upgrades/collectors/?offset=1&limit=1');
    expect(parse(CollectorList, page.json).collectors.map((c) => c.id)).toEqual([C.web2]);
  });

  it('4.2 GET collectors/upgrades/targets/', async () => {
    const t = await startTestSimulator();
    const res = await t.api('GET', 'collectors/upgrades/targets/');
    expect(res.status, res.text).toBe(200);
    parse(Targets, res.json);
  });

  it('4.3 POST collectors/upgrades/', async () => {
    const t = await startTestSimulator();
    const res = await t.api('POST', 'collectors/upgrades/', { body: { collectorId: C.web1 } });
    expect(res.status, res.text).toBe(202);
    const { id } = parse(CreateResult, res.json);
    expect((await t.task(id)).collectorId).toBe(C.web1);
  });

  it('4.4 GET collectors/upgrades/<id>/', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web1);
    const res = await t.api('GET', `collectors/upgrades/${id}/`);
    expect(res.status, res.text).toBe(200);
    expect(parse(StatusBody, res.json).upgrade.id).toBe(Number(id));
  });
});

describe('404 notfound for an unknown path', () => {
  // `collectors` itself is the inventory (GET collectors, inventory.test.ts); below it, nothing else is served.
  const paths = [
    'collectors/offline',
    'collectors/upgrades/collectors/extra',
    'collectors/upgrades/targets/extra',
    'collectors/upgrade',
    'nothing/here',
  ];
  for (const path of paths) {
    it(`GET /api/v1/${path} → 404`, async () => {
      const t = await startTestSimulator();
      expectLegacyError(await t.api('GET', path), 404, 'notfound');
    });
  }

  it('a path outside /api/v1 → 404', async () => {
    const t = await startTestSimulator();
    const res = await t.raw('GET', '/v1/collectors/upgrades/targets', {
      auth: OPS,
      headers: { 'content-type': 'application/json', accept: 'application/json' },
    });
    expectLegacyError(res, 404, 'notfound');
  });
});

describe('hostile request targets (issue #12: one request killed the process)', () => {
  /** Sends a raw HTTP/1.1 request line and returns the status line of the answer. */
  async function rawStatus(url: string, target: string): Promise<string> {
    const { hostname, port } = new URL(url);
    return new Promise((resolve, reject) => {
      const socket = connect(Number(port), hostname, () => {
        socket.write(`GET ${target} HTTP/1.1\r\nHost: ${hostname}\r\nConnection: close\r\n\r\n`);
      });
      let data = '';
      socket.setTimeout(5000, () => socket.destroy(new Error('no answer within 5 s')));
      socket.on('data', (chunk: Buffer) => {
        data += chunk.toString();
      });
      socket.on('end', () => resolve(data.split('\r\n')[0] ?? ''));
      socket.on('error', reject);
    });
  }

  it('GET // and a malformed percent-encoding in a task id get 4xx, and the simulator goes on answering', async () => {
    const t = await startTestSimulator();
    expect(await rawStatus(t.sim.url, '//')).toMatch(/^HTTP\/1\.1 4\d\d/);
    expect(await rawStatus(t.sim.url, '/api/v1/collectors/upgrades/%E0%A4%A')).toMatch(/^HTTP\/1\.1 4\d\d/);
    const res = await t.api('GET', 'collectors/upgrades/%E0%A4%A');
    expect(res.status).toBe(404);
    expect((await t.api('GET', 'collectors/upgrades/targets')).status).toBe(200);
  });
});

describe('405 method.unsupported for a known path with another method', () => {
  const cases: [string, string][] = [
    ['POST', 'collectors/upgrades/collectors'],
    ['DELETE', 'collectors/upgrades/collectors'],
    ['POST', 'collectors/upgrades/targets'],
    ['PUT', 'collectors/upgrades/targets'],
    ['GET', 'collectors/upgrades'],
    ['PUT', 'collectors/upgrades'],
    ['DELETE', 'collectors/upgrades'],
  ];
  for (const [method, path] of cases) {
    it(`${method} ${path} → 405`, async () => {
      const t = await startTestSimulator();
      const body = method === 'GET' ? {} : { body: { collectorId: C.web1 } };
      expectLegacyError(await t.api(method, path, body), 405, 'method.unsupported');
      expect((await t.simCollector(C.web1)).tasks).toEqual([]);
    });
  }

  for (const method of ['DELETE', 'PUT', 'PATCH', 'POST']) {
    it(`${method} collectors/upgrades/<id> → 405`, async () => {
      const t = await startTestSimulator();
      const id = await t.createTask(C.web1);
      expectLegacyError(
        await t.api(method, `collectors/upgrades/${id}`, { body: { collectorId: C.web1 } }),
        405,
        'method.unsupported',
      );
      expect((await t.task(id)).status).toBe(0);
    });
  }
});

describe('4: bodies are JSON', () => {
  it('answers of every kind carry Content-Type application/json', async () => {
    const t = await startTestSimulator();
    const id = await t.createTask(C.web2);
    const answers = [
      await t.api('GET', 'collectors/upgrades/collectors'),
      await t.api('GET', 'collectors/upgrades/targets'),
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.web1 } }),
      await t.api('GET', `collectors/upgrades/${id}`),
      await t.api('POST', 'collectors/upgrades', { body: { collectorId: C.offline } }),
      await t.api('GET', 'collectors/upgrades/424242'),
      await t.api('GET', 'collectors/upgrades/targets', { auth: null }),
      await t.api('GET', 'collectors/upgrades/targets', { headers: { 'content-type': 'text/plain' } }),
      await t.api('DELETE', 'collectors/upgrades/targets'),
    ];
    expect(answers.map((a) => a.status)).toEqual([200, 200, 202, 200, 400, 404, 401, 415, 405]);
    for (const a of answers) {
      expect(String(a.headers['content-type'])).toMatch(/^application\/json/);
      expect(a.json).toBeDefined();
    }
  });
});
