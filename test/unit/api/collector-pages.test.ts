/**
 * `collectorPages()` against listings that misbehave: a service that ignores `offset` (the same
 * page forever, or a cycle of pages) is stopped with a protocol error after a few requests; a
 * live listing whose pages overlap (Collectors came back between two reads, even a whole page
 * of them) is not;
 * ever-new ids stop at the bound of distinct Collectors; the walk ends at the first empty page.
 */
import { describe, expect, it } from 'vitest';
import type { Collector } from '../../../src/api/schema.js';
import { PageFill, walkCollectorPages } from '../../../src/api/walk-collector-pages.js';
import { json, scriptedClient } from './scripted-client.js';

const record = (id: number) => ({
  id,
  name: `c-${id}`,
  collectorType: 'Installable',
  collectorVersion: '19.115-37',
  alive: true,
});
const page = (ids: number[]) => json(200, { collectors: ids.map(record) });
const range = (from: number, n: number) => Array.from({ length: n }, (_, i) => from + i);
const offsetOf = (url: string) => Number(new URL(url).searchParams.get('offset'));

/** Walks every page; stops the test itself after `guard` pages so a defect cannot run forever. */
async function walk(
  client: ReturnType<typeof scriptedClient>['client'],
  params: Parameters<ReturnType<typeof scriptedClient>['client']['collectorPages']>[0],
  guard = 60,
) {
  const pages: Collector[][] = [];
  try {
    for await (const p of client.collectorPages(params)) {
      pages.push(p);
      if (pages.length >= guard) return { pages, error: new Error('test guard: too many pages') };
    }
    return { pages, error: undefined };
  } catch (error) {
    return { pages, error };
  }
}

describe('collectorPages against a service that ignores offset', () => {
  it('stops after a few requests with a protocol error naming the problem', async () => {
    const t = scriptedClient(() => page([1, 2, 3]));
    const { pages, error } = await walk(t.client, { limit: 3 });
    expect(error).toMatchObject({
      name: 'ApiError',
      kind: 'protocol',
      endpoint: 'list',
      message: expect.stringMatching(/ignores offset/),
    });
    expect(pages).toHaveLength(2); // the first repeat may be a live listing: still yielded
    expect(t.requests.length).toBeLessThanOrEqual(3);
  });

  it('stops a cycle of two pages too', async () => {
    const t = scriptedClient((req) => page(offsetOf(req.url) % 4 === 0 ? [1, 2] : [3, 4]));
    const { pages, error } = await walk(t.client, { limit: 2 });
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/ignores offset/) });
    expect(pages).toHaveLength(3);
    expect(t.requests.length).toBeLessThanOrEqual(4);
  });
});

describe('collectorPages on a live listing', () => {
  it('tolerates pages that overlap (a Collector reappeared before the offset) and one stale page', async () => {
    // 1..10 with limit 4; after the first page two Collectors reappear in front, shifting the rest.
    const script = [[1, 2, 3, 4], [3, 4, 5, 6], [3, 4, 5, 6], [7, 8, 9, 10], []];
    const t = scriptedClient(() => page(script.shift() ?? []));
    const { pages, error } = await walk(t.client, { limit: 4 });
    expect(error).toBeUndefined();
    expect(pages.flat().map((c) => c.id)).toEqual([1, 2, 3, 4, 3, 4, 5, 6, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(t.requests.map((r) => offsetOf(r.url))).toEqual([0, 4, 8, 12, 16]);
  });

  it('goes on after a page shorter than limit (the service may cap it), ends at one shorter than its pages', async () => {
    const t = scriptedClient((req) => {
      const offset = offsetOf(req.url);
      return page(range(offset + 1, Math.max(0, Math.min(50, 120 - offset)))); // service caps at 50
    });
    const { pages, error } = await walk(t.client, { limit: 100 });
    expect(error).toBeUndefined();
    expect(pages.map((p) => p.length)).toEqual([50, 50, 20]);
    // 50 < 100 is no end (a cap); 20 < 50, a page the service filled before, is.
    expect(t.requests.map((r) => offsetOf(r.url))).toEqual([0, 50, 100]);
  });

  it('ends a first walk of one short page at the empty page after it', async () => {
    const t = scriptedClient((req) =>
      page(range(offsetOf(req.url) + 1, Math.max(0, 30 - offsetOf(req.url)))),
    );
    const { pages } = await walk(t.client, { limit: 100 });
    expect(pages.map((p) => p.length)).toEqual([30]);
    expect(t.requests.map((r) => offsetOf(r.url))).toEqual([0, 30]);
  });
});

describe('collectorPages bounds', () => {
  it('stops ever-new ids past maxCollectors', async () => {
    const t = scriptedClient((req) => page(range(offsetOf(req.url) * 7 + 1, 10)));
    const { error } = await walk(t.client, { limit: 10, maxCollectors: 45 });
    expect(error).toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/more than 45 Collectors/),
    });
    expect(t.requests.length).toBe(5);
  });

  it('stops past maxPages', async () => {
    const t = scriptedClient((req) => page(range(offsetOf(req.url) + 1, 10)));
    const { error } = await walk(t.client, { limit: 10, maxPages: 3 });
    expect(error).toMatchObject({ kind: 'protocol', message: expect.stringMatching(/within 3 pages/) });
  });
});

describe('PageFill: what earlier walks taught of the pages', () => {
  it('ends a later walk at a page shorter than one the service returned before, not merely shorter than limit', async () => {
    const fleet = Array.from({ length: 250 }, (_, i) => ({ id: i + 1 }));
    const asked: number[] = [];
    const listPage = async (p: { offset: number; limit: number }) => {
      asked.push(p.offset);
      // The service caps its pages at 100, whatever limit is asked.
      return fleet.slice(p.offset, p.offset + Math.min(p.limit, 100)) as unknown as Collector[];
    };
    const fill = new PageFill();
    const walk = async () => {
      asked.length = 0;
      let n = 0;
      for await (const page of walkCollectorPages(listPage, { limit: 1000 }, fill)) n += page.length;
      return n;
    };
    // Pages of 100 (the cap) then one of 50: the end, in the first walk already.
    expect(await walk()).toBe(250);
    expect(asked).toEqual([0, 100, 200]);
    // The same in the next walk, taught by the first.
    expect(await walk()).toBe(250);
    expect(asked).toEqual([0, 100, 200]);
    // A page as long as the longest seen (and shorter than limit) is not taken for the last one.
    fleet.push(...Array.from({ length: 50 }, (_, i) => ({ id: 251 + i })));
    expect(await walk()).toBe(300);
    expect(asked).toEqual([0, 100, 200, 300]);
  });
});
