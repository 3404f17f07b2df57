/**
 * The organizations an event concerns, for a receiver's `orgs` filter and its message's fields:
 * the event's own (`detail.org`: one organization's part), else those its rollout covers, asked
 * of the rollout store once per rollout (a rollout's organizations do not change) and cached.
 */
import { eventOrg } from './receiver-plan.js';
import type { OutboxEvent } from './schema.js';

/** Rollouts remembered at most; the cache starts afresh beyond. */
const MAX_CACHED = 1000;

export class RolloutOrgs {
  private readonly cache = new Map<string, readonly string[]>();

  constructor(private readonly lookup?: (rollout: string) => Promise<readonly string[] | undefined>) {}

  async of(event: OutboxEvent): Promise<readonly string[]> {
    const own = eventOrg(event);
    if (own) return [own];
    const cached = this.cache.get(event.rollout);
    if (cached) return cached;
    // Redis away: the lookup throws, the round fails and the entry is read again (never skipped
    // for want of an answer). A rollout that is gone (forgotten) covers no organization.
    const orgs = (await this.lookup?.(event.rollout)) ?? [];
    if (this.cache.size >= MAX_CACHED) this.cache.clear();
    if (orgs.length > 0) this.cache.set(event.rollout, orgs);
    return orgs;
  }
}
