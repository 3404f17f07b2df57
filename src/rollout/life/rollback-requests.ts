/**
 * Rollback requests not yet carried out (keys.rollbackRequests: rollout id → request JSON,
 * operator/rollback.ts). A request is filed through the rollout's write path (never for a rollout
 * that is gone: a forget that won the race leaves no request behind), taken by the scheduler at
 * its next tick, and removed once carried out unless a newer one replaced it meanwhile.
 */
import type { Redis } from 'ioredis';
import type { Keys } from '../keys.js';
import type { RolloutRef, RolloutWrite, Written } from './rollout-write.js';

type Scripted = Redis & { fuHdelIf(key: string, field: string, value: string): Promise<number> };

export class RollbackRequests {
  constructor(
    private readonly redis: Scripted,
    private readonly keys: Keys,
    /** The rollout store's write (with the audit record of the action that files the request). */
    private readonly write: (
      rollout: RolloutRef,
      change: RolloutWrite,
      now: number,
    ) => Promise<Written | undefined>,
  ) {}

  /** Files a request for rollout `id` (a newer one replaces one not yet taken): false when the rollout is gone. */
  async request(id: string, request: string): Promise<boolean> {
    return (await this.write({ id, phase: 'running' }, { rollbackRequest: request }, 0)) !== undefined;
  }

  /** The request of rollout `id` not yet carried out (its JSON), or undefined. */
  async of(id: string): Promise<string | undefined> {
    return (await this.redis.hget(this.keys.rollbackRequests, id)) ?? undefined;
  }

  /** Removes a request once carried out, unless a newer one replaced it meanwhile. */
  async done(id: string, request: string): Promise<void> {
    await this.redis.fuHdelIf(this.keys.rollbackRequests, id, request);
  }
}
