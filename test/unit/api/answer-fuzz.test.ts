/**
 * Property: whatever the service (or anything in its place) answers — any status, any
 * content-type, Retry-After and Location, JSON of any shape or not JSON at all — every operation
 * of the client ends in a classified value or an ApiError, never another exception, and quickly
 * (the clock is instant: backoff and Retry-After cost no real time). The classifier helpers
 * themselves never throw.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../../../src/api/api-error.js';
import { describeAnswer, parseErrorBody, readRetryAfter } from '../../../src/api/classify-response.js';
import type { HttpAnswer } from '../../../src/api/http-transport.js';
import { scriptedClient } from './scripted-client.js';

const collector = fc.record(
  {
    id: fc.oneof(fc.integer(), fc.double(), fc.string()),
    name: fc.oneof(fc.string(), fc.constant(null)),
    collectorType: fc.constantFrom('Installable', 'Hosted', ''),
    collectorVersion: fc.constantFrom('19.115-37', '20.1-2749', 'x'),
    alive: fc.oneof(fc.boolean(), fc.constant('yes')),
  },
  { requiredKeys: [] },
);
const task = fc.record(
  {
    id: fc.oneof(fc.nat(), fc.string(), fc.constant(-1)),
    collectorId: fc.oneof(fc.nat(), fc.string()),
    toVersion: fc.string(),
    to: fc.string(),
    requestTime: fc.oneof(fc.nat(), fc.double()),
    requestedTime: fc.nat(),
    status: fc.oneof(fc.constantFrom(0, 1, 2, 3, 6), fc.integer({ min: -5, max: 20 })),
    message: fc.oneof(fc.string(), fc.constant(null)),
  },
  { requiredKeys: [] },
);
const code = fc.oneof(
  fc.constantFrom(
    'collector.invalid',
    'collector.type.invalid',
    'collector.not.alive',
    'collector.in.upgrading',
    'collector.version.invalid',
    'moved',
    'rate.limit.exceeded',
    '',
  ),
  fc.string({ maxLength: 300, unit: 'binary' }),
  fc.nat({ max: 20_000 }).map((n) => 'c'.repeat(n)),
);
const text = fc.oneof(
  fc.string({ unit: 'binary', maxLength: 400 }),
  fc.nat({ max: 20_000 }).map((n) => 'm'.repeat(n)),
);
/** Bodies shaped like the interface's, near misses, and anything at all. */
const jsonBody = fc.oneof(
  fc.record({ collectors: fc.array(collector, { maxLength: 4 }) }),
  fc.record({
    targets: fc.array(fc.record({ version: fc.string(), latest: fc.boolean() }), { maxLength: 3 }),
  }),
  fc.record(
    { id: fc.oneof(fc.string(), fc.integer()), link: fc.record({ href: fc.string() }) },
    { requiredKeys: [] },
  ),
  fc.record({ upgrade: task }),
  fc.record({ status: fc.integer(), id: text, code, message: text }, { requiredKeys: [] }),
  fc.record({
    id: text,
    errors: fc.array(fc.record({ code, message: text, detail: text }, { requiredKeys: [] })),
  }),
  fc.jsonValue({ maxDepth: 4 }),
);
const bodyText = fc.oneof(
  jsonBody.map((b) => JSON.stringify(b)),
  fc.string({ maxLength: 200 }),
  fc.constantFrom(
    '',
    '   ',
    '<html><body>401</body></html>',
    '{"targets": [',
    'null',
    '[[[[[[[[[['.repeat(200),
  ),
  fc.nat({ max: 5000 }).map((n) => `[${'['.repeat(n)}${']'.repeat(n)}]`),
);
const header = (known: string[]) =>
  fc.option(fc.oneof(fc.constantFrom(...known), fc.string({ maxLength: 60 })));
const answer: fc.Arbitrary<HttpAnswer> = fc
  .record({
    status: fc.oneof(
      fc.constantFrom(200, 202, 204, 301, 302, 400, 401, 403, 404, 405, 415, 429, 500, 502, 503),
      fc.integer({ min: 100, max: 599 }),
    ),
    contentType: header(['application/json', 'application/json; charset=utf-8', 'text/html', '']),
    retryAfter: header([
      '0',
      '1',
      '-1',
      '999999',
      'Wed, 21 Oct 2015 07:28:00 GMT',
      'Fri, 31 Dec 9999 23:59:59 GMT',
      'NaN',
    ]),
    location: header([
      'https://api.eu.sumologic.com/api/v1/collectors/upgrades/targets',
      'https://api.de.sumologic.com/',
      'https://evil.example/api/v1/x',
      'http://127.0.0.1:1/api/v1',
      '/relative/path',
      'javascript:alert(1)',
      '//evil.example/x',
      'http://[::1',
      '',
    ]),
    text: bodyText,
  })
  .map(({ status, contentType, retryAfter, location, text }) => {
    const headers: Record<string, string> = {};
    if (contentType !== null) headers['content-type'] = contentType;
    if (retryAfter !== null) headers['retry-after'] = retryAfter;
    if (location !== null) headers.location = location;
    return { status, headers, contentType: contentType ?? undefined, text };
  });

/** C0 and C1 controls, DEL, bidi overrides and isolates: nothing a terminal should get from a vendor. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

type Op = 'list' | 'pages' | 'targets' | 'create' | 'status';
const op = fc.constantFrom<Op>('list', 'pages', 'targets', 'create', 'status');

async function run(o: Op, client: ReturnType<typeof scriptedClient>['client']): Promise<unknown> {
  if (o === 'list') return client.listCollectors({ limit: 3 });
  if (o === 'targets') return client.listTargets();
  if (o === 'create') return client.createTask({ collectorId: 1, toVersion: '19.470-4' });
  if (o === 'status') return client.getTask('7');
  const all: unknown[] = [];
  for await (const page of client.collectorPages({ limit: 3, maxPages: 20 })) all.push(...page);
  return all;
}

describe('every answer is classified', () => {
  it('ends in a value or an ApiError, never another exception, within bounded time', async () => {
    await fc.assert(
      fc.asyncProperty(op, fc.array(answer, { minLength: 1, maxLength: 6 }), async (o, answers) => {
        let i = 0;
        // Answers repeat in turn, so retries, redirects and pages always get one.
        const t = scriptedClient((_req) => answers[i++ % answers.length] as HttpAnswer);
        const started = performance.now();
        const outcome = await run(o, t.client).then(
          (value) => ({ value }),
          (error: unknown) => ({ error }),
        );
        if ('error' in outcome && !(outcome.error instanceof ApiError)) throw outcome.error;
        if ('error' in outcome) {
          const message = (outcome.error as Error).message;
          expect(message.length).toBeLessThan(2000);
          expect(message).not.toMatch(CONTROL);
        }
        expect(performance.now() - started).toBeLessThan(1000);
        expect(t.requests.length).toBeLessThanOrEqual(30);
        for (const r of t.requests) expect(new URL(r.url).protocol).toMatch(/^https?:$/);
        await t.client.close();
      }),
      { numRuns: 300 },
    );
  });

  it('the classifier helpers never throw', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string()),
        bodyText,
        fc.integer({ min: 0, max: 999 }),
        fc.oneof(fc.string(), fc.array(fc.string(), { maxLength: 2 })),
        (type, text, status, retryAfter) => {
          const info = parseErrorBody(type ?? undefined, text);
          expect(describeAnswer(status, info).length).toBeLessThan(1000);
          const r = readRetryAfter(retryAfter, Date.now());
          if (r.ms !== undefined) expect(r.ms).toBeGreaterThanOrEqual(0);
          if (r.ms !== undefined) expect(r.ms).toBeLessThanOrEqual(60_000);
        },
      ),
      { numRuns: 1000 },
    );
  });
});
