/**
 * Walking the listing of upgradable Collectors page by page (`offset` advanced by the records
 * actually received, less those the caller says left the listing meanwhile), defended against a service that does not page: the walk keeps the ids it
 * has listed (for its own life only) and
 *   - ends at the first empty page, or at a page shorter than one the service returned before
 *     for the same `limit` (PageFill; see below why not at the first short one);
 *   - fails when STALE_PAGES_LIMIT pages in a row bring no id not listed before: the service
 *     ignores `offset` (one such page alone is a live listing shifted under the walk);
 *   - fails past `maxPages` pages or `maxCollectors` distinct ids, so that neither time nor
 *     memory grows without bound.
 * Failures are ApiErrors of kind `protocol` that name the problem.
 */
import { ApiError } from './api-error.js';
import type { Collector } from './schema.js';

/** `limit` sent when the caller names none: the service's own default differs between its descriptions. */
export const DEFAULT_PAGE_SIZE = 100;
/** Pages one walk reads at most: a fleet of 1 000 000 at a server cap of 50. */
export const DEFAULT_MAX_PAGES = 20_000;
/**
 * Distinct Collectors one walk lists at most. The walk keeps their ids in a Set for its own
 * life only: about 2.6 MB per 100 000 ids (4.2 MB when ids are above 2^31, which V8 stores as
 * heap numbers), so 21 to 37 MB at this bound (measured with Node 20, --expose-gc, heapUsed).
 */
export const DEFAULT_MAX_COLLECTORS = 1_000_000;
/**
 * Pages in a row that bring no Collector not listed before, after which the walk concludes that
 * the service ignores `offset`. One such page can happen on a live listing: Collectors that come
 * back (their task ended) ahead of the offset shift the rest forward by as many, and a whole
 * page of them between two reads is rare but possible; two pages in a row are not a live listing.
 */
export const STALE_PAGES_LIMIT = 2;

export interface WalkCollectorPagesParams {
  toVersion?: string;
  limit?: number;
  signal?: AbortSignal;
  maxPages?: number;
  maxCollectors?: number;
  /**
   * Bounds on how many Collectors listed earlier in this walk have left the listing by now (the
   * caller started their tasks). A listing is live: the rest move forward by as many, and the
   * next page starts that much earlier instead of skipping them. Between two pages at most
   * `atMost(now) - atLeast(at the previous page)` left; stepping back by that much can only
   * repeat Collectors, never skip one.
   */
  left?: () => Promise<LeftBounds>;
}

export interface LeftBounds {
  /** Collectors that may have left (e.g. every one whose task was asked for). */
  atMost: number;
  /** Collectors that have surely left (their task is known to run, or to have reached the build). */
  atLeast: number;
}

/**
 * What earlier walks of one client learned of the service's pages: the longest page it returned
 * for each `limit` asked. A service fills its pages (a page holds `limit` records, or its own cap
 * of them, unless the listing ends), so a later page shorter than one it returned before for the
 * same `limit` is the last one, and the empty page after it need not be read.
 */
export class PageFill {
  private readonly longest = new Map<number, number>();

  /** Whether a page of `length` records (for `limit`) ends the listing. */
  ends(limit: number, length: number): boolean {
    return length < limit && length < (this.longest.get(limit) ?? 0);
  }

  note(limit: number, length: number): void {
    if (length > (this.longest.get(limit) ?? 0)) this.longest.set(limit, length);
  }
}

export type ListCollectorsPage = (params: {
  toVersion?: string;
  offset: number;
  limit: number;
  signal?: AbortSignal;
}) => Promise<Collector[]>;

export async function* walkCollectorPages(
  listPage: ListCollectorsPage,
  params: WalkCollectorPagesParams = {},
  fill?: PageFill,
): AsyncGenerator<Collector[]> {
  const { maxPages: maxPagesParam, maxCollectors: maxCollectorsParam, left, ...listParams } = params;
  const limit = params.limit ?? DEFAULT_PAGE_SIZE;
  const maxPages = maxPagesParam ?? DEFAULT_MAX_PAGES;
  const maxCollectors = maxCollectorsParam ?? DEFAULT_MAX_COLLECTORS;
  const failure = (why: string) =>
    new ApiError('protocol', `GET collectors/upgrades/collectors: ${why}`, { endpoint: 'list' });
  const seen = new Set<number>();
  const staleOffsets: number[] = [];
  /** Where the next page starts when nothing left the listing. */
  let next = 0;
  /**
   * The next page starts at least here: stepping back for those that left moves on all the same,
   * by a tenth of a page at least (so that Collectors admitted whose tasks never start cannot hold
   * the walk in place). Only when more than nine tenths of a page left between two pages can it
   * skip some, which the next scan finds.
   */
  let floor = 0;
  let before: LeftBounds | undefined;
  for (let page = 0; page < maxPages; page++) {
    // Asked for when the page is: the caller may have started tasks since the last one.
    const bounds = left ? await left() : undefined;
    const back = before && bounds ? Math.max(0, bounds.atMost - before.atLeast) : 0;
    const offset = Math.max(floor, next - back);
    before = bounds;
    const collectors = await listPage({ ...listParams, offset, limit });
    // The end is the first empty page, or a page shorter than one the service returned before
    // for this limit (PageFill). Not merely one shorter than `limit`: neither the interface nor
    // api-facts.md says how large a `limit` the service accepts, so a page shorter than `limit`
    // may only mean that the service capped it (the UI shows 50 at a time; the two
    // descriptions' defaults are 50 and 1000), and stopping there could silently miss most of
    // the fleet. So a client's first walk costs one request more.
    if (collectors.length === 0) return;
    const pageOffset = offset;
    next = pageOffset + collectors.length;
    floor = pageOffset + Math.ceil(collectors.length / 10);
    let fresh = 0;
    for (const c of collectors) {
      if (seen.has(c.id)) continue;
      seen.add(c.id);
      fresh++;
    }
    if (fresh > 0) staleOffsets.length = 0;
    else {
      // A page of repeats alone is yielded all the same: on a live listing its records may be
      // newer than the first copies (a Collector came back on another build).
      staleOffsets.push(pageOffset);
      if (staleOffsets.length >= STALE_PAGES_LIMIT)
        throw failure(
          `the service ignores offset: the pages at offsets ${staleOffsets.join(' and ')} list only ` +
            `Collectors already listed (${seen.size} distinct in ${page + 1} pages); the listing cannot be walked`,
        );
    }
    if (seen.size > maxCollectors)
      throw failure(
        `the listing lists more than ${maxCollectors} Collectors (distinct ids) in ${page + 1} pages; ` +
          'pass a larger maxCollectors if the fleet is that large',
      );
    const last = fill?.ends(limit, collectors.length) ?? false;
    fill?.note(limit, collectors.length);
    yield collectors;
    if (last) return;
  }
  throw failure(`the listing did not end within ${maxPages} pages`);
}
