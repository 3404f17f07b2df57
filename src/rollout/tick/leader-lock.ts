/**
 * Leader election through Redis: one scheduler at a time holds a key with a time-to-live and
 * renews it; when its process dies the key expires and another process takes over within one
 * TTL. States: follower → leader (SET NX won) → follower (renewal lost, or released on stop).
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { defineScripts } from '../../lib/redis/redis-scripts.js';

type Scripted = Redis & {
  fuRenewLock(key: string, token: string, ttl: number): Promise<number>;
  fuReleaseLock(key: string, token: string): Promise<number>;
};

export class LeaderLock {
  readonly token = randomUUID();
  private readonly redis: Scripted;
  private held = false;

  constructor(
    redis: Redis,
    private readonly key: string,
    /** Real milliseconds the lock lives without renewal. */
    readonly ttlMs: number,
  ) {
    defineScripts(redis, [
      { command: 'fuRenewLock', module: 'rollout/tick', name: 'renew-lock-1' },
      { command: 'fuReleaseLock', module: 'rollout/tick', name: 'release-lock-1' },
    ]);
    this.redis = redis as Scripted;
  }

  get isLeader(): boolean {
    return this.held;
  }

  /** Takes the lock if free, or renews it if ours. Returns whether we lead now. */
  async tryAcquire(): Promise<boolean> {
    if (this.held) {
      this.held = (await this.redis.fuRenewLock(this.key, this.token, this.ttlMs)) === 1;
      if (this.held) return true;
    }
    this.held = (await this.redis.set(this.key, this.token, 'PX', this.ttlMs, 'NX')) === 'OK';
    return this.held;
  }

  async release(): Promise<void> {
    if (!this.held) return;
    this.held = false;
    await this.redis.fuReleaseLock(this.key, this.token);
  }
}
