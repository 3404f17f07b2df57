/**
 * Raw HTTP/1.1 requests for fuzzing a server over TCP, below what an HTTP client lets one send:
 * random methods (and malformed ones), targets (`//`, `..`, broken and valid `%` escapes, very
 * long, raw non-ASCII bytes, absolute and `*` forms), headers (duplicated, huge, control bytes
 * in values, conflicting Content-Length / Transfer-Encoding) and bodies (random bytes, JSON-ish,
 * huge, chunked well or badly). `sendRaw` writes one, half-closes, and says how it ended: an
 * HTTP answer, a closed connection, or (a failure) something else or nothing in time.
 */
import { connect } from 'node:net';
import fc from 'fast-check';
import { expect } from 'vitest';

export interface RawRequest {
  method: string;
  target: string;
  headers: [string, string][];
  body: Uint8Array;
  /** Send the body as chunks (a Transfer-Encoding: chunked header is then among the headers). */
  chunked: 'no' | 'well' | 'badly';
}

export type RawOutcome =
  | { kind: 'answered'; status: number; head: string }
  | { kind: 'closed' }
  | { kind: 'garbage'; head: string }
  | { kind: 'hung' };

const SEGMENTS = [
  '',
  '.',
  '..',
  '%',
  '%z',
  '%zz',
  '%E0%A4%A',
  '%C0%AF',
  '%2F',
  '%2e%2e',
  '%00',
  '%40',
  '%FF',
  'rollouts',
  'status',
  'metrics',
  'healthz',
  'readyz',
  'history',
  'pause',
  'resume',
  'abort',
  'promote',
  'retry',
  'rollback',
  'forget',
  'linux-fleet@19.470-4',
  'linux-fleet%4019.470-4',
  'api',
  'v1',
  'collectors',
  'upgrades',
  'targets',
  '_sim',
  'stats',
  'fleet',
  'clock',
  'é',
  '日本語',
  '\u202e',
  '🚀',
  'a?b=c',
  '#frag',
  ';param',
];

const segment = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom(...SEGMENTS) },
  { weight: 1, arbitrary: fc.string({ maxLength: 12 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'grapheme', maxLength: 6 }) },
  { weight: 1, arbitrary: fc.integer({ min: 0, max: 2_000_000_000 }).map(String) },
);

/** Characters the request line cannot hold (they end it or split it): replaced, so the line stays one line. */
const lineSafe = (text: string) => text.replace(/[\r\n ]/g, (c) => (c === ' ' ? '%20' : ''));

const query = fc.oneof(
  fc.constant(''),
  fc.constantFrom(
    '?limit=5',
    '?limit=0',
    '?limit=-1',
    '?limit=1e9',
    '?limit=abc',
    '?limit=%',
    '?a=1&a=2',
    '?',
    '??',
  ),
  fc.string({ maxLength: 30 }).map((q) => `?${q}`),
);

const target = fc.oneof(
  {
    weight: 8,
    arbitrary: fc
      .tuple(
        fc.array(segment, { minLength: 0, maxLength: 6 }),
        fc.constantFrom('/', '/', '/', '//'),
        fc.boolean(),
        query,
      )
      .map(([parts, sep, slash, q]) => lineSafe(`/${parts.join(sep)}${slash ? '/' : ''}${q}`)),
  },
  {
    weight: 1,
    arbitrary: fc
      .tuple(
        fc.constantFrom('/rollouts/', '/api/v1/collectors/upgrades/', '/'),
        fc.integer({ min: 2_000, max: 90_000 }),
      )
      .map(([head, n]) => `${head}${'a'.repeat(n)}`),
  },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      '*',
      'http://example.com/status',
      'http://127.0.0.1/rollouts',
      'rollouts',
      '//',
      '///',
      '//rollouts',
      '/\\..\\..\\etc\\passwd',
      '/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/rollouts/%E0%A4%A/history',
      '/api/v1/collectors/upgrades/%zz',
      '/_sim/%',
    ),
  },
);

const method = fc.oneof(
  { weight: 6, arbitrary: fc.constantFrom('GET', 'HEAD', 'POST', 'PUT', 'DELETE', 'OPTIONS', 'PATCH') },
  {
    weight: 1,
    arbitrary: fc.constantFrom(
      'TRACE',
      'CONNECT',
      'PROPFIND',
      'get',
      'G ET',
      '',
      'GET\t',
      'FOO',
      'POST\u0000',
    ),
  },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Z]{1,12}$/) },
);

const HEADER_NAMES = [
  'Host',
  'Content-Type',
  'Content-Length',
  'Transfer-Encoding',
  'Authorization',
  'Connection',
  'Expect',
  'X-Forwarded-For',
  'Cookie',
  'Accept',
  'Upgrade',
  'Origin',
];

const headerValue = fc.oneof(
  fc.constantFrom(
    'application/json',
    'application/json; charset=utf-8',
    'APPLICATION/JSON',
    'text/plain',
    '127.0.0.1',
    'localhost:9464',
    'evil.example',
    '[::1]',
    '[::1',
    'Bearer ',
    'Bearer tok-0123456789abcdef0123',
    'Basic b3BzOm9wcy1zZWNyZXQ=',
    'Basic ',
    'Basic !!!',
    'chunked',
    'gzip, chunked',
    'identity',
    '100-continue',
    'close',
    'keep-alive',
    'upgrade',
    'websocket',
    '0',
    '-1',
    '10',
    '99999999999999999999',
    '1e3',
    ' 5',
    '',
  ),
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'binary', maxLength: 20 }),
  fc.integer({ min: 15_000, max: 70_000 }).map((n) => 'x'.repeat(n)),
);

const header = fc.tuple(
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...HEADER_NAMES) },
    { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9-]{1,20}$/) },
    { weight: 1, arbitrary: fc.constantFrom('Bad Name', 'Bad:Name', '', 'X-\u00e9') },
  ),
  headerValue,
);

const body = fc.oneof(
  { weight: 3, arbitrary: fc.constant(new Uint8Array()) },
  { weight: 3, arbitrary: fc.uint8Array({ maxLength: 2048 }) },
  {
    weight: 3,
    arbitrary: fc
      .oneof(
        fc.json(),
        fc.constantFrom(
          '{}',
          '{"full":true}',
          '{"only":["failed"]}',
          '{"reason":"x"}',
          '{',
          '[]',
          'null',
          '\u00ff',
        ),
      )
      .map((t) => new TextEncoder().encode(t)),
  },
  {
    weight: 1,
    arbitrary: fc.integer({ min: 100_000, max: 2_000_000 }).map((n) => new Uint8Array(n).fill(0x61)),
  },
);

export const rawRequest: fc.Arbitrary<RawRequest> = fc
  .record({
    method,
    target,
    headers: fc.array(header, { maxLength: 8 }),
    body,
    chunked: fc.constantFrom('no', 'no', 'no', 'well', 'badly'),
    length: fc.constantFrom('right', 'right', 'none', 'wrong'),
    host: fc.boolean(),
  })
  .map(({ length, host, ...r }): RawRequest => {
    const headers = [...r.headers];
    if (host) headers.unshift(['Host', '127.0.0.1']);
    if (r.chunked !== 'no') headers.push(['Transfer-Encoding', 'chunked']);
    else if (length === 'right') headers.push(['Content-Length', String(r.body.length)]);
    else if (length === 'wrong') headers.push(['Content-Length', String(r.body.length + 7)]);
    return { ...r, headers };
  });

/** The request's bytes as they go on the wire. */
export function encodeRequest(r: RawRequest): Buffer {
  const head = `${r.method} ${r.target} HTTP/1.1\r\n${r.headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
  const parts: Buffer[] = [Buffer.from(head, 'utf8')];
  if (r.chunked === 'no') parts.push(Buffer.from(r.body));
  else if (r.chunked === 'well') {
    for (let at = 0; at < r.body.length; at += 1000) {
      const piece = r.body.subarray(at, at + 1000);
      parts.push(Buffer.from(`${piece.length.toString(16)}\r\n`), Buffer.from(piece), Buffer.from('\r\n'));
    }
    parts.push(Buffer.from('0\r\n\r\n'));
  } else {
    // A size that is no hex number, or larger than what follows, then garbage.
    parts.push(Buffer.from(`zz\r\n`), Buffer.from(r.body), Buffer.from('\r\nffffffff\r\nabc'));
  }
  return Buffer.concat(parts);
}

/**
 * Sends `bytes` on a new connection, then half-closes it (a request that is incomplete ends
 * there) unless `keepOpen` (then the request never ends on its own: the server's time-outs must
 * end it), and waits at most `limitMs` for the server to answer or close.
 */
export function sendRaw(port: number, bytes: Buffer, limitMs = 3000, keepOpen = false): Promise<RawOutcome> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let head = Buffer.alloc(0);
    let settled = false;
    const finish = (outcome: RawOutcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve(outcome);
    };
    const judge = () => {
      const text = head.toString('latin1');
      const m = /^HTTP\/1\.[01] (\d{3}) /.exec(text);
      if (m) return finish({ kind: 'answered', status: Number(m[1]), head: text.slice(0, 200) });
      if (head.length >= 13) return finish({ kind: 'garbage', head: text.slice(0, 200) });
    };
    const timer = setTimeout(() => finish({ kind: 'hung' }), limitMs);
    socket.on('connect', () => {
      socket.write(bytes, () => {
        if (!keepOpen) socket.end();
      });
    });
    socket.on('data', (chunk: Buffer) => {
      head = Buffer.concat([head, chunk]).subarray(0, 256);
      judge();
    });
    // A reset while we still write (the server refused early) is a closed connection too.
    socket.on('error', () => undefined);
    socket.on('close', () => {
      judge();
      finish(head.length ? { kind: 'garbage', head: head.toString('latin1') } : { kind: 'closed' });
    });
  });
}

/**
 * Watches the process for what must never happen while a server is fuzzed: an uncaught
 * exception or an unhandled rejection. `stop()` removes the listeners and returns what was seen.
 */
export function watchProcess(): { stop(): unknown[] } {
  const seen: unknown[] = [];
  const onError = (err: unknown) => {
    seen.push(err);
  };
  process.on('uncaughtException', onError);
  process.on('unhandledRejection', onError);
  return {
    stop() {
      process.off('uncaughtException', onError);
      process.off('unhandledRejection', onError);
      return seen;
    },
  };
}

/**
 * Sends batches of one to four of `requests` at once (400 batches at most, or 5 s) to the server
 * on `port`: each must be answered below 500 or closed, and this process must see no uncaught
 * exception or unhandled rejection meanwhile. Returns how every request ended.
 */
export async function fuzzServer(port: number, requests: fc.Arbitrary<RawRequest>): Promise<RawOutcome[]> {
  const watch = watchProcess();
  const outcomes: RawOutcome[] = [];
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(requests, { minLength: 1, maxLength: 4 }), async (batch) => {
        const ends = await Promise.all(batch.map((r) => sendRaw(port, encodeRequest(r))));
        ends.forEach((end, i) => {
          outcomes.push(end);
          const sent = encodeRequest(batch[i] as RawRequest)
            .subarray(0, 300)
            .toString('latin1');
          expect(end.kind, `${JSON.stringify(end)} for ${JSON.stringify(sent)}`).toMatch(
            /^(answered|closed)$/,
          );
          if (end.kind === 'answered')
            expect(end.status, `${end.head} for ${JSON.stringify(sent)}`).toBeLessThan(500);
        });
      }),
      { numRuns: 400, interruptAfterTimeLimit: 5000, markInterruptAsFailure: false, endOnFailure: true },
    );
  } finally {
    const seen = watch.stop();
    expect(seen, String(seen[0])).toEqual([]);
  }
  expect(outcomes.length).toBeGreaterThan(20);
  return outcomes;
}
