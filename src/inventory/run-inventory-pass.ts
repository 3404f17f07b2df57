/**
 * One inventory pass of one organization: the installed Collectors (`GET collectors`,
 * `filter=installed`), 1,000 a page, folded into counts as they come (tally-inventory.ts). The
 * pages are paced: the next page is asked for no sooner than `pageEveryMs` (clock time) after
 * the one before, and each goes through the organization's API budget at the lowest priority
 * (REQUEST_PRIORITY.inventory), behind every request of the rollouts. A pass that fails or is
 * aborted (leadership lost, the daemon stopping) leaves nothing: only a complete pass is a count.
 */
import type { CollectorUpgradeClient } from '../api/index.js';
import type { Clock } from '../lib/clock.js';
import type { Policy } from '../policy/schema.js';
import type { InventoryPass } from './inventory-store.js';
import { createTally } from './tally-inventory.js';

export interface InventoryPassDeps {
  client: Pick<CollectorUpgradeClient, 'inventoryPages'>;
  clock: Clock;
  org: string;
  policies: readonly Policy[];
  /** Clock ms between the requests of two pages, at the least. */
  pageEveryMs: number;
  signal?: AbortSignal;
}

export async function runInventoryPass(deps: InventoryPassDeps): Promise<InventoryPass> {
  const { clock, signal } = deps;
  const startedAt = clock.now();
  const tally = createTally(deps.org, deps.policies);
  let pages = 1;
  let askedAt = startedAt;
  const pages$ = deps.client.inventoryPages({
    filter: 'installed',
    ...(signal ? { signal } : {}),
    beforePage: async () => {
      const wait = askedAt + deps.pageEveryMs - clock.now();
      if (wait > 0) await clock.sleep(wait, signal);
      signal?.throwIfAborted();
      pages++;
    },
  });
  // Counted from the previous page's answer: a page that waited for the budget does not shorten
  // the gap to the next one.
  for await (const page of pages$) {
    askedAt = clock.now();
    tally.add(page);
  }
  return { ...tally.result(), startedAt, at: clock.now(), pages };
}
