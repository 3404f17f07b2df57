/**
 * The daemon's HTTP server under random requests (fast-check): random methods, targets (empty
 * segments, stray and broken percent-encodings, non-ASCII, very long), headers and bodies, sent
 * raw. Every request gets a 4xx/2xx answer or a closed connection, never a 5xx, and the server
 * answers /healthz afterwards. The rollout API runs on stub stores that know no rollout.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../src/http/start-http-server.js';
import { captureLogger } from '../../support/capture-logger.js';
import { startStubRolloutServer } from '../../support/stub-rollout-server.js';

let server: RunningHttpServer;
beforeAll(async () => {
  server = await startStubRolloutServer({
    get: async () => undefined,
    list: async () => [],
    redis: {
      pipeline() {
        const pipe = { hgetall: () => pipe, time: () => pipe, exec: async () => [] };
        return pipe;
      },
    },
    logger: captureLogger('warn').logger,
  });
});
afterAll(() => server.close());

function send(raw: Buffer): Promise<string> {
  const { hostname, port } = new URL(server.url);
  return new Promise((resolve) => {
    const socket = connect(Number(port), hostname, () => socket.end(raw));
    let out = '';
    socket.on('data', (d: Buffer) => {
      out += d.toString('latin1');
    });
    socket.on('close', () => resolve(out));
    socket.on('error', () => resolve(out));
    socket.setTimeout(5000, () => socket.destroy());
  });
}

const segment = fc.oneof(
  fc.constantFrom(
    '',
    'rollouts',
    'status',
    'history',
    'pause',
    'abort',
    'retry',
    'metrics',
    '%',
    '%E0%A4%A',
    '%zz',
    '..',
    '.',
    'a@1.0-1',
    '%40',
    '?',
    '#',
  ),
  fc.string({ maxLength: 12 }),
  fc.string({ unit: 'binary', maxLength: 6 }).map((s) => encodeURIComponent(s)),
);
const target = fc.oneof(
  fc.array(segment, { maxLength: 5 }).map((parts) => `/${parts.join('/')}`),
  fc.constantFrom('//', '*', 'http://x/healthz', '/?', '/rollouts?limit=%', `/${'x'.repeat(9000)}`),
);
const request = fc.record({
  method: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH', 'TRACE', 'CONNECT'),
  target,
  contentType: fc.option(
    fc.constantFrom('application/json', 'text/plain', 'application/json; charset=latin1', ''),
    {
      nil: undefined,
    },
  ),
  authorization: fc.option(fc.string({ maxLength: 40 }), { nil: undefined }),
  body: fc.oneof(
    fc.constant(''),
    fc.json(),
    fc.string({ maxLength: 200 }),
    fc.constantFrom('{"only":["failed"]}', '{"full":true}', '{"reason":"x"}', '[]', 'null'),
  ),
});

describe('the HTTP server under random requests', () => {
  it('answers each with a non-5xx status or closes it, and lives on', async () => {
    await fc.assert(
      fc.asyncProperty(request, async (r) => {
        const body = Buffer.from(r.body, 'utf8');
        const headers = [
          `${r.method} ${r.target} HTTP/1.1`,
          'Host: 127.0.0.1',
          ...(r.contentType === undefined ? [] : [`Content-Type: ${r.contentType}`]),
          ...(r.authorization === undefined
            ? []
            : [`Authorization: ${r.authorization.replace(/[\r\n]/g, '')}`]),
          `Content-Length: ${body.length}`,
          'Connection: close',
        ];
        const answer = await send(
          Buffer.concat([Buffer.from(`${headers.join('\r\n')}\r\n\r\n`, 'latin1'), body]),
        );
        if (answer === '') return;
        const status = Number(/^HTTP\/1\.1 (\d{3})/.exec(answer)?.[1]);
        expect(status, `${r.method} ${r.target}: ${answer.slice(0, 200)}`).toBeGreaterThanOrEqual(200);
        expect(status, `${r.method} ${r.target}: ${answer.slice(0, 200)}`).toBeLessThan(500);
      }),
      { numRuns: 300 },
    );
    const health = await send(
      Buffer.from('GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n'),
    );
    expect(health).toMatch(/^HTTP\/1\.1 200 /);
  }, 60_000);
});
