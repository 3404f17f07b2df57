/**
 * The one-off policies as stored (keys.oneOffs: name → policy JSON, one-off/one-off-policies.ts),
 * as the rollouts' store reads them: a one-off that never started (it has no rollout yet) may be
 * removed, as read and while it has none (lua/remove-one-off-2.lua).
 */
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import type { Keys } from '../keys.js';

type Scripted = Redis & {
  fuRemoveOneOff(oneOffs: string, policies: string, name: string, json: string): Promise<number>;
};

export class OneOffRecords {
  constructor(
    private readonly redis: Scripted,
    private readonly keys: Keys,
  ) {}

  /** The one-off `name` as stored when it has no rollout (it never started); else undefined. */
  async unstarted(name: string): Promise<string | undefined> {
    const [json, current] = replies(
      await this.redis.pipeline().hget(this.keys.oneOffs, name).hget(this.keys.policies, name).exec(),
    ) as [string | null, string | null];
    return json !== null && current === null ? json : undefined;
  }

  /** Removes a one-off that never started, only as read and while it has no rollout: true when removed. */
  async removeUnstarted(name: string, json: string): Promise<boolean> {
    return (await this.redis.fuRemoveOneOff(this.keys.oneOffs, this.keys.policies, name, json)) === 1;
  }

  /** Whether `policy` is a one-off's (`upgrade`, a rollback), stored in Redis rather than a file. */
  async isOneOff(policy: string): Promise<boolean> {
    return (await this.redis.hexists(this.keys.oneOffs, policy)) === 1;
  }
}
