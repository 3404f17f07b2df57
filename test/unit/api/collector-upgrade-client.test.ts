import { describe, expect, it } from 'vitest';
import type { ApiAttemptEvent, ApiOperationEvent } from '../../../src/api/api-hooks.js';
import { createCollectorUpgradeClient } from '../../../src/api/collector-upgrade-client.js';
import { type HttpAnswer, type HttpRequest, TransportError } from '../../../src/api/http-transport.js';
import { createMemoryRequestBudget } from '../../../src/api/memory-request-budget.js';
import type { RequestBudget } from '../../../src/api/request-budget.js';
import { captureLogger } from '../../support/capture-logger.js';
import { createInstantClock } from '../../support/instant-clock.js';

type Step = (req: HttpRequest) => HttpAnswer;

const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  contentType: 'application/json',
  text: JSON.stringify(body),
});
const legacy = (status: number, code: string, message = 'm') =>
  json(status, { status, id: 'AAAAA-BBBBB-CCCCC', code, message });
const targets = json(200, { targets: [{ version: '19.470-4', latest: true }] });
const dropped = () => {
  throw new TransportError('network', 'other side closed (UND_ERR_SOCKET)', true, 'UND_ERR_SOCKET');
};
const refused = () => {
  throw new TransportError('network', 'connect ECONNREFUSED', false, 'ECONNREFUSED');
};

const SECRET = 'k3y-secret-value';

function setup(steps: Step[], over: { baseUrl?: string; budget?: RequestBudget } = {}) {
  const requests: HttpRequest[] = [];
  const attempts: ApiAttemptEvent[] = [];
  const operations: ApiOperationEvent[] = [];
  const clock = createInstantClock();
  const log = captureLogger('debug');
  const client = createCollectorUpgradeClient({
    config: {
      baseUrl: over.baseUrl ?? 'https://api.sumologic.com/api/v1',
      accessId: 'suABC',
      accessKey: SECRET,
    },
    clock,
    logger: log.logger,
    budget: over.budget ?? createMemoryRequestBudget({ perSecond: 0, concurrent: 0 }),
    hooks: { onAttempt: (e) => attempts.push(e), onOperation: (e) => operations.push(e) },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxTotalMs: 60_000 },
    random: () => 0.5,
    transport: {
      send: async (req) => {
        requests.push(req);
        const step = steps.shift();
        if (!step) throw new Error(`unexpected request ${req.method} ${req.url}`);
        return step(req);
      },
      close: async () => {},
    },
  });
  return { client, requests, attempts, operations, clock, log };
}

describe('requests', () => {
  it('sends JSON content type, accept and basic auth on every request, GETs included', async () => {
    const t = setup([() => targets, () => json(202, { id: '1' })]);
    await t.client.listTargets();
    await t.client.createTask({ collectorId: 7 });
    for (const r of t.requests) {
      expect(r.headers['content-type']).toBe('application/json');
      expect(r.headers.accept).toBe('application/json');
      expect(r.headers.authorization).toBe(`Basic ${Buffer.from(`suABC:${SECRET}`).toString('base64')}`);
      expect(r.timeoutMs).toBe(30_000);
    }
    expect(t.requests[0]?.url).toBe('https://api.sumologic.com/api/v1/collectors/upgrades/targets');
    expect(t.requests[1]).toMatchObject({ method: 'POST', body: '{"collectorId":7}' });
  });

  it('always sends limit and offset when listing, and the version when given', async () => {
    const t = setup([() => json(200, { collectors: [] })]);
    await t.client.listCollectors({ toVersion: '19.470-4' });
    expect(t.requests[0]?.url).toBe(
      'https://api.sumologic.com/api/v1/collectors/upgrades/collectors?toVersion=19.470-4&offset=0&limit=100',
    );
  });
});

describe('retries', () => {
  it('retries 5xx with full-jitter backoff, then succeeds', async () => {
    const t = setup([
      () => legacy(503, 'service.unavailable'),
      () => legacy(500, 'internal.error'),
      () => targets,
    ]);
    expect(await t.client.listTargets()).toEqual([{ version: '19.470-4', latest: true }]);
    expect(t.clock.sleeps).toEqual([50, 100]); // random 0.5 × 100, × 200
    expect(t.attempts.map((a) => [a.attempt, a.statusCode, a.outcome])).toEqual([
      [1, 503, 'server'],
      [2, 500, 'server'],
      [3, 200, 'ok'],
    ]);
    expect(t.operations).toMatchObject([{ endpoint: 'targets', outcome: 'ok', attempts: 3, retries: 2 }]);
  });

  it('honours Retry-After on 429 and counts the 429s', async () => {
    const limited = json(
      429,
      { id: 'X', errors: [{ code: 'rate.limit.exceeded', message: 'slow down' }] },
      { 'retry-after': '3' },
    );
    const t = setup([() => limited, () => targets]);
    await t.client.listTargets();
    expect(t.clock.sleeps).toEqual([3000]);
    expect(t.attempts[0]).toMatchObject({ statusCode: 429, rateLimited: true, outcome: 'rate_limited' });
    expect(t.operations[0]).toMatchObject({ rateLimitedCount: 1, retries: 1 });
  });

  it('gives up after maxAttempts with the last error kind, vendor code and request id', async () => {
    const t = setup(Array.from({ length: 4 }, () => () => legacy(503, 'service.unavailable', 'down')));
    const err = await t.client.listTargets().catch((e: unknown) => e);
    expect(err).toMatchObject({
      name: 'ApiError',
      kind: 'server',
      code: 'FLEET_ERR_API_SERVER',
      status: 503,
      vendorCode: 'service.unavailable',
      requestId: 'AAAAA-BBBBB-CCCCC',
      attempts: 4,
    });
    expect((err as Error).message).toBe(
      'GET collectors/upgrades/targets answered 503 service.unavailable: down (request AAAAA-BBBBB-CCCCC)',
    );
    expect(t.operations[0]).toMatchObject({ outcome: 'server', attempts: 4 });
  });

  it('retries a dropped GET', async () => {
    const t = setup([dropped, () => targets]);
    await t.client.listTargets();
    expect(t.attempts.map((a) => a.outcome)).toEqual(['network', 'ok']);
  });

  it('does not retry what another attempt cannot fix', async () => {
    const t = setup([() => legacy(401, 'unauthorized')]);
    await expect(t.client.listTargets()).rejects.toMatchObject({ kind: 'authentication', attempts: 1 });
    expect(t.clock.sleeps).toEqual([]);
  });
});

describe('create', () => {
  it('answers created with the task id as a string', async () => {
    const t = setup([
      () => json(202, { id: '12345', link: { rel: 'self', href: '/v1/collectors/upgrades/12345' } }),
    ]);
    expect(await t.client.createTask({ collectorId: 1, toVersion: '19.470-4' })).toEqual({
      kind: 'created',
      taskId: '12345',
      href: '/v1/collectors/upgrades/12345',
      attempts: 1,
    });
    expect(t.requests[0]?.body).toBe('{"collectorId":1,"toVersion":"19.470-4"}');
  });

  it.each([
    'collector.invalid',
    'collector.type.invalid',
    'collector.not.alive',
    'collector.in.upgrading',
    'collector.version.invalid',
  ] as const)('answers %s as a value', async (code) => {
    const t = setup([() => legacy(400, code, 'why')]);
    const r = await t.client.createTask({ collectorId: 1 });
    expect(r).toEqual({ kind: code, message: 'why', requestId: 'AAAAA-BBBBB-CCCCC', attempts: 1 });
    expect(t.operations[0]?.outcome).toBe(code);
  });

  it('throws an unknown 400 code as invalid_request, keeping the code', async () => {
    const t = setup([() => legacy(400, 'something.new')]);
    await expect(t.client.createTask({ collectorId: 1 })).rejects.toMatchObject({
      kind: 'invalid_request',
      vendorCode: 'something.new',
    });
  });

  it('reports a create dropped after sending as ambiguous and does not repeat it', async () => {
    const t = setup([dropped]);
    const r = await t.client.createTask({ collectorId: 1 });
    expect(r).toMatchObject({ kind: 'ambiguous', reason: 'network', attempts: 1 });
    expect(t.requests).toHaveLength(1);
    expect(t.operations[0]?.outcome).toBe('ambiguous');
  });

  it('reports a create that timed out as ambiguous', async () => {
    const t = setup([
      () => {
        throw new TransportError('timeout', 'no answer within 30000 ms', true);
      },
    ]);
    expect(await t.client.createTask({ collectorId: 1 })).toMatchObject({
      kind: 'ambiguous',
      reason: 'timeout',
    });
  });

  it('retries a create that certainly never left (connection refused), and a 5xx', async () => {
    const t = setup([refused, () => legacy(503, 'service.unavailable'), () => json(202, { id: 9 })]);
    expect(await t.client.createTask({ collectorId: 1 })).toMatchObject({
      kind: 'created',
      taskId: '9',
      attempts: 3,
    });
  });

  it('runs beforeSend after the budget let each attempt go and before it is sent; a rejection sends nothing', async () => {
    const order: string[] = [];
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 0 });
    const acquire = budget.acquire.bind(budget);
    budget.acquire = async (signal) => {
      order.push('budget');
      return acquire(signal);
    };
    const t = setup(
      [
        () => {
          order.push('sent');
          return legacy(503, 'service.unavailable');
        },
        () => {
          order.push('sent');
          return json(202, { id: 9 });
        },
      ],
      { budget },
    );
    const before = async () => {
      order.push('beforeSend');
    };
    expect(await t.client.createTask({ collectorId: 1 }, undefined, before)).toMatchObject({
      kind: 'created',
    });
    expect(order).toEqual(['budget', 'beforeSend', 'sent', 'budget', 'beforeSend', 'sent']);
    const refusing = async () => {
      throw new Error('the record moved on');
    };
    await expect(t.client.createTask({ collectorId: 1 }, undefined, refusing)).rejects.toThrow(
      'the record moved on',
    );
    expect(t.requests).toHaveLength(2);
  });
});

describe('status', () => {
  it('answers found with a normalised task, and not_found as a value', async () => {
    const task = { id: 5, collectorId: 1, to: '19.470-4', requestedTime: 10, status: 6, message: '' };
    const t = setup([() => json(200, { upgrade: task }), () => legacy(404, 'notfound', 'gone')]);
    expect(await t.client.getTask('5')).toEqual({
      kind: 'found',
      task: {
        id: '5',
        collectorId: 1,
        toVersion: '19.470-4',
        requestTime: 10,
        status: 6,
        state: 'progressing',
        message: '',
      },
    });
    expect(await t.client.getTask(6)).toEqual({
      kind: 'not_found',
      message: 'gone',
      requestId: 'AAAAA-BBBBB-CCCCC',
    });
    expect(t.requests[1]?.url).toBe('https://api.sumologic.com/api/v1/collectors/upgrades/6');
  });
});

describe('protocol errors', () => {
  it('names the field of a body that does not match', async () => {
    const t = setup([() => json(200, { targets: [{ version: '1.0-1', latest: 'yes' }] })]);
    await expect(t.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/targets\[0\]\.latest: /),
    });
  });

  it('classifies an HTML 200 as a protocol error', async () => {
    const html: HttpAnswer = { status: 200, headers: {}, contentType: 'text/html', text: '<html></html>' };
    const t = setup([() => html]);
    await expect(t.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: 'GET collectors/upgrades/targets answered 200: a non-JSON body (text/html)',
    });
  });
});

describe('deployment redirect', () => {
  const moved = (location: string) =>
    json(301, { status: 301, id: 'M-M-M', code: 'moved', message: 'wrong deployment' }, { location });

  it('follows 301 moved once, keeps credentials, remembers the base URL and logs once', async () => {
    const t = setup([
      () => moved('https://api.eu.sumologic.com/api/v1/collectors/upgrades/targets'),
      () => targets,
      () => targets,
    ]);
    await t.client.listTargets();
    await t.client.listTargets();
    expect(t.requests.map((r) => r.url)).toEqual([
      'https://api.sumologic.com/api/v1/collectors/upgrades/targets',
      'https://api.eu.sumologic.com/api/v1/collectors/upgrades/targets',
      'https://api.eu.sumologic.com/api/v1/collectors/upgrades/targets',
    ]);
    expect(t.requests[1]?.headers.authorization).toBe(t.requests[0]?.headers.authorization);
    expect(t.client.baseUrl()).toBe('https://api.eu.sumologic.com/api/v1');
    const moves = t.log.lines().filter((l) => String(l.msg).startsWith('api base URL moved'));
    expect(moves).toHaveLength(1);
    expect(moves[0]).toMatchObject({
      from: 'https://api.sumologic.com/api/v1',
      to: 'https://api.eu.sumologic.com/api/v1',
    });
    expect(t.operations[0]).toMatchObject({ attempts: 1 });
  });

  it('keeps the base path when Location names only the host', async () => {
    const t = setup([() => moved('https://api.de.sumologic.com/'), () => targets]);
    await t.client.listTargets();
    expect(t.client.baseUrl()).toBe('https://api.de.sumologic.com/api/v1');
  });

  it('refuses a second redirect, a missing Location and a downgrade to http', async () => {
    const loop = setup([
      () => moved('https://api.de.sumologic.com/api/v1/collectors/upgrades/targets'),
      () => moved('https://api.eu.sumologic.com/api/v1/x'),
    ]);
    await expect(loop.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/redirected again/),
    });
    const none = setup([() => legacy(301, 'moved')]);
    await expect(none.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/no Location/),
    });
    const http = setup([() => moved('http://evil.example/api/v1/collectors/upgrades/targets')]);
    await expect(http.client.listTargets()).rejects.toMatchObject({
      message: expect.stringMatching(/https to plain http/),
    });
  });
});

describe('secrets', () => {
  it('keeps the access key out of errors, logs and metrics', async () => {
    const t = setup([
      () => legacy(401, 'unauthorized'),
      dropped,
      ...Array.from({ length: 4 }, () => () => legacy(503, 'service.unavailable')),
    ]);
    const errors = [
      await t.client.listTargets().catch((e: unknown) => e),
      await t.client.createTask({ collectorId: 1 }),
      await t.client.listCollectors().catch((e: unknown) => e),
    ];
    const everything = JSON.stringify([
      errors.map((e) => (e instanceof Error ? `${e.message} ${e.stack} ${JSON.stringify(e)}` : e)),
      t.attempts,
      t.operations,
      t.log.text(),
    ]);
    expect(everything).not.toContain(SECRET);
    expect(everything).not.toContain(Buffer.from(`suABC:${SECRET}`).toString('base64'));
  });
});

describe('request budget', () => {
  it('retries a 429 even when the budget cannot record it', async () => {
    const budget = createMemoryRequestBudget({ perSecond: 0, concurrent: 0 });
    budget.rateLimited = async () => {
      throw new Error('redis down');
    };
    const t = setup([() => json(429, { errors: [{ code: 'rate.limit.exceeded' }] }), () => targets], {
      budget,
    });
    expect(await t.client.listTargets()).toHaveLength(1);
    expect(t.log.text()).toContain('request budget could not record a 429');
  });
});
