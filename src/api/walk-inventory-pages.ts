/**
 * Walking the inventory (`GET collectors`, every Collector of the organization) page by page,
 * `offset` advanced by the records received. Unlike the upgradable listing
 * (walk-collector-pages.ts), the vendor documents this endpoint's `limit` (up to 1,000), so a
 * page shorter than the `limit` asked (at most 1,000) is the last one: a fleet of N Collectors
 * costs ceil(N / limit) requests, plus one empty page only when N is a multiple of `limit`.
 * Defended against a service that does not page as documented:
 *   - a page longer than `limit` fails (the service ignored `limit`);
 *   - STALE_INVENTORY_PAGES pages in a row that bring no id not listed before fail (the service
 *     ignores `offset`);
 *   - more than `maxPages` pages or `maxCollectors` distinct ids fail, so that neither time nor
 *     memory grows without bound.
 * A Collector listed twice (the list shifted under the walk: one registered before the offset)
 * is yielded once, so that counts stay true. Failures are ApiErrors of kind `protocol`.
 */
import { ApiError } from './api-error.js';
import type { InventoryCollector } from './schema.js';

/** The vendor's documented largest `limit` of GET collectors, and the one the walk asks for. */
export const INVENTORY_PAGE_SIZE = 1000;
/** Pages one walk reads at most: 1 000 000 Collectors at 1,000 a page (an organization holds 10,000). */
export const DEFAULT_MAX_INVENTORY_PAGES = 1000;
/** Distinct Collectors one walk lists at most (their ids are kept for the walk's life: ~26 MB). */
export const DEFAULT_MAX_INVENTORY_COLLECTORS = 1_000_000;
/** Pages in a row without a Collector not listed before, after which the service ignores `offset`. */
export const STALE_INVENTORY_PAGES = 2;

/** The inventory's `filter` (the vendor's documentation); absent: every Collector. */
export type InventoryFilter = 'installed' | 'hosted' | 'dead' | 'alive';

export interface WalkInventoryParams {
  filter?: InventoryFilter;
  /** Collectors per page, 1..1000 (default 1000). */
  limit?: number;
  signal?: AbortSignal;
  maxPages?: number;
  maxCollectors?: number;
  /** Awaited before each page but the first, when one is due: the caller's pacing. */
  beforePage?: () => Promise<void>;
}

export type ListInventoryPage = (params: {
  filter?: InventoryFilter;
  offset: number;
  limit: number;
  signal?: AbortSignal;
}) => Promise<InventoryCollector[]>;

export async function* walkInventoryPages(
  listPage: ListInventoryPage,
  params: WalkInventoryParams = {},
): AsyncGenerator<InventoryCollector[]> {
  const limit = params.limit ?? INVENTORY_PAGE_SIZE;
  if (!Number.isInteger(limit) || limit < 1 || limit > INVENTORY_PAGE_SIZE)
    throw new RangeError(`inventory page size must be a whole number from 1 to ${INVENTORY_PAGE_SIZE}`);
  const maxPages = params.maxPages ?? DEFAULT_MAX_INVENTORY_PAGES;
  const maxCollectors = params.maxCollectors ?? DEFAULT_MAX_INVENTORY_COLLECTORS;
  const failure = (why: string) =>
    new ApiError('protocol', `GET collectors: ${why}`, { endpoint: 'inventory' });
  const seen = new Set<number>();
  let stale = 0;
  let offset = 0;
  for (let page = 0; page < maxPages; page++) {
    if (page > 0) await params.beforePage?.();
    const collectors = await listPage({
      ...(params.filter ? { filter: params.filter } : {}),
      offset,
      limit,
      ...(params.signal ? { signal: params.signal } : {}),
    });
    if (collectors.length > limit)
      throw failure(
        `the page at offset ${offset} holds ${collectors.length} Collectors for limit=${limit}: the service ignores limit`,
      );
    offset += collectors.length;
    const fresh = collectors.filter((c) => {
      if (seen.has(c.id)) return false;
      seen.add(c.id);
      return true;
    });
    if (collectors.length > 0 && fresh.length === 0) {
      if (++stale >= STALE_INVENTORY_PAGES)
        throw failure(
          `${stale} pages in a row list only Collectors already listed (${seen.size} distinct in ${page + 1} pages): the service ignores offset`,
        );
    } else stale = 0;
    if (seen.size > maxCollectors)
      throw failure(
        `more than ${maxCollectors} Collectors (distinct ids) in ${page + 1} pages; pass a larger maxCollectors if the organization is that large`,
      );
    if (fresh.length > 0) yield fresh;
    if (collectors.length < limit) return;
  }
  throw failure(`the inventory did not end within ${maxPages} pages`);
}
