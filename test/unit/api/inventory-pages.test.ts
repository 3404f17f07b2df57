/**
 * `inventoryPages()` (GET collectors): pages of 1,000 with `filter` sent, the end at the first page
 * shorter than `limit` (the vendor documents `limit` up to 1,000: a short page is the last, so a
 * fleet of N costs ceil(N / 1000) requests), a Collector listed twice yielded once, the caller's
 * pacing awaited before each page but the first, and services that do not page as documented
 * (ignoring `limit` or `offset`, a listing without end) stopped with a protocol error.
 * Bodies are checked with zod: a record without `alive` is a protocol error naming the field; one
 * without a version is a Collector of unknown build.
 */
import { describe, expect, it } from 'vitest';
import { REQUEST_PRIORITY } from '../../../src/api/request-budget.js';
import type { InventoryCollector } from '../../../src/api/schema.js';
import { json, scriptedClient } from './scripted-client.js';

const record = (id: number, extra: Record<string, unknown> = {}) => ({
  id,
  name: `c-${id}`,
  collectorType: 'Installable',
  collectorVersion: '19.470-4',
  alive: true,
  category: '',
  description: '',
  fields: {},
  ...extra,
});
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const paramsOf = (url: string) => new URL(url).searchParams;

/** A service of `total` Collectors with ids 1..total that pages as documented. */
function documented(total: number) {
  return scriptedClient((req) => {
    const q = paramsOf(req.url);
    const offset = Number(q.get('offset'));
    const limit = Number(q.get('limit'));
    const ids = range(offset + 1, Math.max(0, Math.min(limit, total - offset)));
    return json(200, { collectors: ids.map((id) => record(id)) });
  });
}

async function walk(client: ReturnType<typeof scriptedClient>['client'], params = {}) {
  const pages: InventoryCollector[][] = [];
  try {
    for await (const p of client.inventoryPages(params)) {
      pages.push(p);
      if (pages.length > 100) throw new Error('test guard: too many pages');
    }
    return { pages, error: undefined };
  } catch (error) {
    return { pages, error };
  }
}

describe('inventoryPages against a service that pages as documented', () => {
  it.each([
    [0, 1],
    [1, 1],
    [999, 1],
    [1000, 2],
    [2300, 3],
    [10_000, 11],
  ])('%i Collectors: %i requests, each Collector once', async (total, requests) => {
    const t = documented(total);
    const { pages, error } = await walk(t.client, { filter: 'installed' });
    expect(error).toBeUndefined();
    expect(pages.flat().map((c) => c.id)).toEqual(range(1, total));
    expect(t.requests).toHaveLength(requests);
    expect(t.requests.length).toBeLessThanOrEqual(Math.floor(total / 1000) + 1);
    for (const [i, req] of t.requests.entries()) {
      expect(new URL(req.url).pathname).toMatch(/\/collectors$/);
      expect(Object.fromEntries(paramsOf(req.url))).toEqual({
        filter: 'installed',
        offset: String(i * 1000),
        limit: '1000',
      });
    }
  });

  it('awaits the caller before each page but the first', async () => {
    const t = documented(2500);
    const seen: number[] = [];
    const { error } = await walk(t.client, {
      beforePage: async () => {
        seen.push(t.requests.length);
      },
    });
    expect(error).toBeUndefined();
    expect(seen).toEqual([1, 2]);
  });

  it('a Collector listed again (one registered before the offset shifted the rest) is yielded once', async () => {
    const t = scriptedClient((req) => {
      const offset = Number(paramsOf(req.url).get('offset'));
      return json(200, {
        collectors: (offset === 0 ? range(1, 3) : [3, 4]).map((id) => record(id)),
      });
    });
    const { pages, error } = await walk(t.client, { limit: 3 });
    expect(error).toBeUndefined();
    expect(pages.flat().map((c) => c.id)).toEqual([1, 2, 3, 4]);
  });

  it('a record without a version is a Collector of unknown build, not an error', async () => {
    const t = scriptedClient(() =>
      json(200, {
        collectors: [record(1, { collectorVersion: undefined }), record(2, { collectorVersion: '' })],
      }),
    );
    const { pages, error } = await walk(t.client);
    expect(error).toBeUndefined();
    expect(pages.flat().map((c) => c.collectorVersion ?? null)).toEqual([null, '']);
  });
});

describe('inventory pages in the API budget', () => {
  it('are the least urgent request: they wait behind every request of the rollouts', () => {
    const { inventory, ...rollouts } = REQUEST_PRIORITY;
    expect(inventory).toBeGreaterThan(Math.max(...Object.values(rollouts)));
  });

  it('are counted as endpoint inventory by the hooks', async () => {
    const t = documented(10);
    await walk(t.client);
    expect(t.attempts.map((a) => a.endpoint)).toEqual(['inventory']);
    expect(t.operations.map((o) => [o.endpoint, o.outcome])).toEqual([['inventory', 'ok']]);
  });
});

describe('inventoryPages against a service that does not page as documented', () => {
  it('a page longer than limit: the service ignores limit', async () => {
    const t = scriptedClient(() => json(200, { collectors: range(1, 5).map((id) => record(id)) }));
    const { error } = await walk(t.client, { limit: 3 });
    expect(error).toMatchObject({
      kind: 'protocol',
      endpoint: 'inventory',
      message: expect.stringMatching(/ignores limit/),
    });
  });

  it('the same full page again and again: the service ignores offset, stopped after two', async () => {
    const t = scriptedClient(() => json(200, { collectors: range(1, 3).map((id) => record(id)) }));
    const { pages, error } = await walk(t.client, { limit: 3 });
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/ignores offset/) });
    expect(pages).toHaveLength(1);
    expect(t.requests).toHaveLength(3);
  });

  it('ever-new full pages: stopped at maxPages', async () => {
    const t = documented(1_000_000);
    const { error } = await walk(t.client, { maxPages: 4 });
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/within 4 pages/) });
    expect(t.requests).toHaveLength(4);
  });

  it('a record without alive is a protocol error naming the field', async () => {
    const t = scriptedClient(() => json(200, { collectors: [record(1, { alive: undefined })] }));
    const { error } = await walk(t.client);
    expect(error).toMatchObject({
      kind: 'protocol',
      endpoint: 'inventory',
      message: expect.stringMatching(/collectors\[0\]\.alive/),
    });
  });

  it('a page size outside 1..1000 is refused before any request', async () => {
    const t = documented(10);
    const { error } = await walk(t.client, { limit: 1001 });
    expect(error).toBeInstanceOf(RangeError);
    expect(t.requests).toHaveLength(0);
  });
});
