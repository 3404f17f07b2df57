/**
 * When this deployment first saw each build in each organization's build list: the build list
 * carries no release date, so a policy's `minAge` counts from here (the age seen here, not the
 * vendor's). Kept in Redis, one hash per organization (build → clock ms), written with HSETNX so
 * that a restart, another leader or a second reading never moves a first sighting later. Read
 * into memory once per organization and then only when the list shows a build not seen yet.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../keys.js';

export class BuildsSeen {
  private readonly known = new Map<string, Map<string, number>>();

  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /**
   * Records the builds of `org`'s list not seen before as first seen `now`, and answers when each
   * build of the organization was first seen.
   */
  async record(org: string, builds: readonly string[], now: number): Promise<ReadonlyMap<string, number>> {
    let seen = this.known.get(org);
    if (!seen) {
      seen = parseSeen(await this.redis.hgetall(this.keys.buildsSeen(org)));
      this.known.set(org, seen);
    }
    const fresh = builds.filter((b) => !seen.has(b));
    if (fresh.length === 0) return seen;
    const key = this.keys.buildsSeen(org);
    const pipe = this.redis.pipeline();
    for (const b of fresh) pipe.hsetnx(key, b, String(now));
    pipe.hgetall(key);
    const replies = (await pipe.exec()) ?? [];
    const all = replies[replies.length - 1]?.[1] as Record<string, string> | undefined;
    const next = parseSeen(all ?? {});
    this.known.set(org, next);
    return next;
  }

  /** When each build of `org` was first seen, as last read (empty before the first `record`). */
  of(org: string): ReadonlyMap<string, number> {
    return this.known.get(org) ?? new Map();
  }
}

/** The first sightings a command reads (status), without recording anything. */
export async function readBuildsSeen(redis: Redis, keys: Keys, org: string): Promise<Map<string, number>> {
  return parseSeen(await redis.hgetall(keys.buildsSeen(org)));
}

function parseSeen(raw: Record<string, string>): Map<string, number> {
  const out = new Map<string, number>();
  for (const [build, at] of Object.entries(raw)) if (Number.isFinite(Number(at))) out.set(build, Number(at));
  return out;
}
