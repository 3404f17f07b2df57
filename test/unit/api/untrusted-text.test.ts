/**
 * Everything the vendor (or whatever answers in its place) writes is untrusted: codes, messages,
 * request ids, content types, task ids and task messages reach error messages, logs and Redis,
 * so each is clipped to a bounded length, kept on one line and stripped of control characters;
 * and no answer body is read past a fixed size.
 */
import { describe, expect, it } from 'vitest';
import type { HttpAnswer } from '../../../src/api/http-transport.js';
import { json, scriptedClient } from './scripted-client.js';

const BIG = 5 * 1024 * 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u202a-\u202e\u2066-\u2069]/;

async function failure(run: () => Promise<unknown>): Promise<Error & Record<string, unknown>> {
  const err = await run().catch((e: unknown) => e);
  if (!(err instanceof Error)) throw new Error(`expected an error, got ${JSON.stringify(err)}`);
  return err as Error & Record<string, unknown>;
}

describe('vendor strings are clipped', () => {
  it('clips a 5 MB legacy error code in the error, its vendorCode and the logs', async () => {
    const code = 'c'.repeat(BIG);
    const t = scriptedClient([() => json(403, { status: 403, id: 'A-B-C', code, message: 'no' })]);
    const err = await failure(() => t.client.listTargets());
    expect(err).toMatchObject({ kind: 'permission', status: 403 });
    expect(err.message.length).toBeLessThan(1000);
    expect(String(err.vendorCode).length).toBeLessThanOrEqual(101);
    expect(t.log.text().length).toBeLessThan(10_000);
  });

  it.each([
    [
      'legacy',
      (n: number) => ({ status: 403, id: 'i'.repeat(n), code: 'x'.repeat(n), message: 'm'.repeat(n) }),
    ],
    [
      'newer',
      (n: number) => ({ id: 'i'.repeat(n), errors: [{ code: 'x'.repeat(n), message: 'm'.repeat(n) }] }),
    ],
  ])(
    'clips a long code, request id and message of the %s shape (a body small enough to read)',
    async (_shape, make) => {
      const t = scriptedClient([() => json(403, make(20_000))]);
      const err = await failure(() => t.client.listTargets());
      expect(err).toMatchObject({ kind: 'permission', vendorCode: expect.stringMatching(/^x+…$/) });
      expect(err.message.length).toBeLessThan(1000);
      expect(String(err.vendorCode).length).toBeLessThanOrEqual(101);
      expect(String(err.requestId).length).toBeLessThanOrEqual(65);
    },
  );

  it('clips a 5 MB code of the newer shape, a huge request id and message', async () => {
    const body = { id: 'i'.repeat(BIG), errors: [{ code: 'x'.repeat(BIG), message: 'm'.repeat(BIG) }] };
    const t = scriptedClient([() => json(400, body)]);
    const err = await failure(() => t.client.listCollectors());
    expect(err.message.length).toBeLessThan(1000);
    expect(String(err.vendorCode).length).toBeLessThanOrEqual(101);
    expect(String(err.requestId).length).toBeLessThanOrEqual(65);
  });

  it('clips the vendor create code and message returned as values', async () => {
    const t = scriptedClient([
      () =>
        json(400, {
          status: 400,
          id: 'r'.repeat(10_000),
          code: 'collector.not.alive',
          message: 'm'.repeat(40_000),
        }),
    ]);
    const r = await t.client.createTask({ collectorId: 1 });
    expect(r.kind).toBe('collector.not.alive');
    if (r.kind !== 'collector.not.alive') throw new Error('unreachable');
    expect(r.message.length).toBeLessThanOrEqual(301);
    expect(String(r.requestId).length).toBeLessThanOrEqual(65);
  });

  it('strips control characters (terminal escapes, bidi overrides) from vendor text', async () => {
    const t = scriptedClient([
      () =>
        json(403, {
          status: 403,
          id: 'A-B-C\u001b[2J',
          code: 'forbidden\u001b]0;pwned\u0007',
          message: 'evil\u001b[31m red\u202e txet\u0000',
        }),
    ]);
    const err = await failure(() => t.client.listTargets());
    for (const text of [err.message, String(err.vendorCode), String(err.requestId)]) {
      expect(text).not.toMatch(CONTROL);
    }
  });

  it('clips a huge content type named in a non-JSON error', async () => {
    const type = `text/${'h'.repeat(10_000)}`;
    const html: HttpAnswer = {
      status: 401,
      headers: { 'content-type': type },
      contentType: type,
      text: '<html>',
    };
    const t = scriptedClient([() => html]);
    const err = await failure(() => t.client.listTargets());
    expect(err).toMatchObject({ kind: 'authentication' });
    expect(err.message.length).toBeLessThan(500);
  });

  it('refuses a task id longer than any real one, and clips a task message', async () => {
    const t = scriptedClient([
      () => json(202, { id: '9'.repeat(BIG) }),
      () =>
        json(200, {
          upgrade: {
            id: 5,
            collectorId: 1,
            toVersion: '19.470-4',
            requestTime: 1,
            status: 3,
            message: `disk full\u001b[2J${'!'.repeat(BIG)}`,
          },
        }),
    ]);
    const err = await failure(() => t.client.createTask({ collectorId: 1 }));
    expect(err).toMatchObject({ kind: 'protocol' });
    expect(err.message.length).toBeLessThan(1000);
    const status = await t.client.getTask(5);
    if (status.kind !== 'found') throw new Error('expected found');
    expect(status.task.message.length).toBeLessThanOrEqual(501);
    expect(status.task.message.startsWith('disk full')).toBe(true);
    expect(status.task.message).not.toContain('\u001b');
  });
});

describe('answer bodies are bounded', () => {
  it('refuses a success body larger than the cap with a clear protocol error, without retrying', async () => {
    const huge = json(200, { targets: [{ version: 'v'.repeat(9 * 1024 * 1024), latest: true }] });
    const t = scriptedClient([() => huge]);
    const err = await failure(() => t.client.listTargets());
    expect(err).toMatchObject({ kind: 'protocol', status: 200, attempts: 1 });
    expect(err.message).toMatch(/larger than 8 MiB/);
    expect(t.requests).toHaveLength(1);
  });

  it('does not parse an error body larger than the error cap, and still classifies it', async () => {
    const body = JSON.stringify({ status: 403, code: 'forbidden', message: 'm'.repeat(200_000) });
    const answer: HttpAnswer = { status: 403, headers: {}, contentType: 'application/json', text: body };
    const t = scriptedClient([() => answer]);
    const err = await failure(() => t.client.listTargets());
    expect(err).toMatchObject({ kind: 'permission', status: 403, vendorCode: undefined });
    expect(err.message).toMatch(/too large/);
  });
});
