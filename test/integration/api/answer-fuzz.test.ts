/**
 * Property, over real HTTP on loopback: a stub server answers each request with a random
 * status, content-type, Retry-After and Location and a random body (JSON of the interface's
 * shapes and near misses, anything JSON, not JSON, or a dropped connection). Every operation of
 * the real client (undici transport included) ends in a classified value or an ApiError, never
 * another exception, in bounded time, and never leaves loopback. A few seconds in all.
 */
import fc from 'fast-check';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/api-error.js';
import { createUndiciTransport, type HttpTransport } from '../../../src/api/http-transport.js';
import { closeTestClients, createTestClient } from '../../support/api-client.js';
import { type StubServer, startStubServer, stopStubServers } from '../../support/stub-server.js';

interface Scripted {
  status: number;
  headers: Record<string, string>;
  body: string | 'DROP';
}

let script: Scripted[] = [];
let served = 0;
let stub: StubServer;
let transport: HttpTransport;

beforeAll(async () => {
  stub = await startStubServer((_req, res) => {
    const s = script[served++ % script.length] as Scripted;
    if (s.body === 'DROP') {
      res.socket?.destroy();
      return;
    }
    res.writeHead(s.status, s.headers);
    res.end(s.body);
  });
  const real = createUndiciTransport({ connections: 4 });
  transport = {
    send: (req) => {
      // The property must never make the client leave loopback (a Location to a real deployment).
      const host = new URL(req.url).hostname;
      if (host !== '127.0.0.1') throw new Error(`non-loopback request to ${host}`);
      return real.send(req);
    },
    close: () => real.close(),
  };
});
afterEach(async () => {
  await closeTestClients();
});
afterAll(async () => {
  await transport.close();
  await stopStubServers();
});

const printable = (max: number) => fc.string({ maxLength: max });
const code = fc.oneof(
  fc.constantFrom('collector.not.alive', 'collector.in.upgrading', 'moved', 'rate.limit.exceeded', ''),
  printable(40),
  fc.nat({ max: 20_000 }).map((n) => 'c'.repeat(n)),
);
const body = fc.oneof(
  fc.constant('DROP'),
  fc.constantFrom('', '<html>401</html>', '{"collectors": [', 'null', '[]'),
  printable(100),
  fc
    .oneof(
      fc.record({
        collectors: fc.array(
          fc.record(
            {
              id: fc.oneof(fc.nat(), fc.string()),
              name: fc.string(),
              collectorType: fc.constant('Installable'),
              collectorVersion: fc.constant('19.115-37'),
              alive: fc.boolean(),
            },
            { requiredKeys: [] },
          ),
          { maxLength: 4 },
        ),
      }),
      fc.record({
        targets: fc.array(fc.record({ version: fc.string(), latest: fc.boolean() }), { maxLength: 3 }),
      }),
      fc.record({ id: fc.oneof(fc.string(), fc.nat()) }),
      fc.record({
        upgrade: fc.record(
          {
            id: fc.nat(),
            collectorId: fc.nat(),
            toVersion: fc.string(),
            requestTime: fc.nat(),
            status: fc.integer({ min: -1, max: 7 }),
            message: fc.string({ unit: 'binary', maxLength: 100 }),
          },
          { requiredKeys: [] },
        ),
      }),
      fc.record({
        status: fc.nat(),
        id: fc.string({ unit: 'binary' }),
        code,
        message: fc.string({ unit: 'binary' }),
      }),
      fc.record({
        id: fc.string(),
        errors: fc.array(fc.record({ code, message: fc.string({ unit: 'binary' }) })),
      }),
      fc.jsonValue({ maxDepth: 3 }),
    )
    .map((v) => JSON.stringify(v)),
);
const scripted: fc.Arbitrary<Scripted> = fc
  .record({
    status: fc.oneof(
      fc.constantFrom(200, 202, 301, 302, 400, 401, 403, 404, 415, 429, 500, 503),
      fc.integer({ min: 200, max: 599 }),
    ),
    contentType: fc.option(
      fc.oneof(fc.constantFrom('application/json', 'text/html; charset=utf-8'), printable(30)),
    ),
    retryAfter: fc.option(
      fc.oneof(fc.constantFrom('0', '1', '-1', '999999', 'Fri, 31 Dec 9999 23:59:59 GMT'), printable(20)),
    ),
    location: fc.option(
      fc.oneof(
        fc.constantFrom(
          'https://evil.example/api/v1/x',
          '/api/v1/other',
          '//evil.example/',
          'ftp://x/',
          'http://[::1',
        ),
        printable(40),
      ),
    ),
    body,
  })
  .map(({ status, contentType, retryAfter, location, body }) => {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['content-type'] = contentType;
    if (retryAfter !== null) headers['retry-after'] = retryAfter;
    if (location !== null) headers.location = location;
    return { status, headers, body };
  });

type Op = 'list' | 'pages' | 'targets' | 'create' | 'status';

describe('every answer over HTTP is classified', () => {
  it('ends in a value or an ApiError, never another exception', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom<Op>('list', 'pages', 'targets', 'create', 'status'),
        fc.array(scripted, { minLength: 1, maxLength: 4 }),
        async (op, answers) => {
          script = answers;
          served = 0;
          const { client } = createTestClient(stub.baseUrl, {
            transport,
            retry: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 100, maxTotalMs: 600_000 },
          });
          const started = performance.now();
          const run = async (): Promise<unknown> => {
            if (op === 'list') return client.listCollectors({ limit: 3 });
            if (op === 'targets') return client.listTargets();
            if (op === 'create') return client.createTask({ collectorId: 1 });
            if (op === 'status') return client.getTask(7);
            let n = 0;
            for await (const page of client.collectorPages({ limit: 3, maxPages: 10 })) n += page.length;
            return n;
          };
          const outcome = await run().then(
            () => undefined,
            (error: unknown) => error,
          );
          if (outcome !== undefined && !(outcome instanceof ApiError)) throw outcome;
          if (outcome instanceof ApiError) {
            expect(outcome.message.length).toBeLessThan(2000);
            expect(`${outcome.vendorCode ?? ''}${outcome.requestId ?? ''}`.length).toBeLessThan(200);
          }
          expect(performance.now() - started).toBeLessThan(3000);
        },
      ),
      { numRuns: 150 },
    );
  });
});
