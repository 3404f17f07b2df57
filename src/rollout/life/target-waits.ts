/**
 * Why a policy's newest build waits to start there, kept per policy for `status`, `/status` and
 * the history: a `minAge` the build has not reached yet (its age is the age seen here: BuildsSeen),
 * or a ring (`after`) that has not released it. The scheduler (tick/choose-build.ts) writes a wait
 * when it begins or its reason changes, and clears it when the build starts (or the policy needs
 * none); each write of a ring's wait carries its event (`ring.waiting`, `ring.released`), in the
 * history of the rollout it is about (the policy × the build) and the outbox, in one step
 * (lua/set-target-wait-4.lua).
 */
import type { Redis } from 'ioredis';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import type { Keys } from '../keys.js';
import { rolloutId } from '../rollout-id.js';
import { HISTORY_LIMIT, OUTBOX_LIMIT } from './event-log.js';
import type { RolloutNews } from './rollout-events.js';
import { recordedEvent } from './rollout-write.js';

/** How long the history of a rollout that never started is kept (that of retention). */
const UNSTARTED_HISTORY_MS = 30 * 86_400_000;

export interface TargetWait {
  policy: string;
  /** The build that waits to start in the policy (the newest its target allows). */
  build: string;
  /** `age`: younger than `minAge`; `ring`: the ring it follows has not released it. */
  kind: 'age' | 'ring';
  /** The policy it follows (`ring`). */
  after?: string;
  /** Why, as a word: `young`, or the ring's (`soaking`, `converging`, `halted`, ...). */
  reason: string;
  /** Why, as a sentence: `19.480-2 soaks in canary until 2026-11-27 10:00 (UTC)`. */
  text: string;
  /** When it may start by itself (an age reached, a soak ended), clock ms. */
  until?: number;
  /** When this deployment first saw the build (`age`), clock ms. */
  firstSeen?: number;
  /** The build the policy runs meanwhile (its current rollout's), if any. */
  running?: string;
  /** Since when it waits for this reason, clock ms. */
  since: number;
}

type Scripted = Redis & { fuSetTargetWait(...args: (string | number)[]): Promise<number> };

export class TargetWaits {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    defineScripts(redis, [{ command: 'fuSetTargetWait', module: 'rollout/life', name: 'set-target-wait-4' }]);
    this.redis = redis as Scripted;
  }

  /** Every policy's wait, by policy. */
  async read(): Promise<Map<string, TargetWait>> {
    return parseWaits(await this.redis.hgetall(this.keys.targetWaits));
  }

  /**
   * Records `wait` for `policy` (undefined: it waits no more) with `news`, events about the rollout
   * of `policy` × `build`, told in its history and the outbox in the same step.
   */
  async set(
    policy: string,
    build: string,
    wait: TargetWait | undefined,
    news: readonly RolloutNews[],
    now: number,
  ): Promise<void> {
    const id = rolloutId(policy, build);
    const events = news.map((n) => recordedEvent({ id, policy, build }, n, now));
    await this.redis.fuSetTargetWait(
      this.keys.targetWaits,
      this.keys.rollout(id),
      this.keys.history(id),
      this.keys.outbox,
      policy,
      wait ? JSON.stringify(wait) : '',
      HISTORY_LIMIT,
      OUTBOX_LIMIT,
      UNSTARTED_HISTORY_MS,
      events.length,
      ...events.flatMap((e) => [e.id, JSON.stringify(e)]),
    );
  }
}

/** The waits as stored; unreadable entries are left out. */
export function parseWaits(raw: Record<string, string>): Map<string, TargetWait> {
  const out = new Map<string, TargetWait>();
  for (const [policy, json] of Object.entries(raw)) {
    try {
      const w = JSON.parse(json) as TargetWait;
      if (w && typeof w.build === 'string' && typeof w.text === 'string') out.set(policy, w);
    } catch {
      // Written by a newer or broken version: not shown.
    }
  }
  return out;
}
