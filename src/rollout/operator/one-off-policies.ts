/**
 * One-off rollouts (`fleet-upgrade upgrade --collector ID,... --to BUILD|latest`, and the
 * rollouts of `fleet-upgrade rollback`, rollback.ts): a policy
 * written to Redis instead of a file, for the named Collectors only, run by the scheduler like any
 * policy (same budget, slots, records, report) and ahead of the files' policies, so that an
 * operator's explicit request wins over an overlapping policy. Its target is pinned to the build
 * it resolved to when it started (a newer `latest` does not restart it); once its rollout has
 * converged or was aborted, the scheduler leaves it alone; `forget` removes it.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { Policy, type PolicyInput } from '../../policy/schema.js';
import type { Keys } from '../keys.js';

export interface OneOffRecord {
  policy: PolicyInput;
  createdBy: string;
  createdAt: number;
}

/** How a one-off policy says what it is (its description). */
export const ONE_OFF_DESCRIPTION = 'one-off rollout (fleet-upgrade upgrade)';

/** A rollback's one-off policy says whose Collectors it takes back (rollback.ts). */
export function rollbackDescription(source: string): string {
  return `rollback of ${source} (fleet-upgrade rollback)`;
}

/** The rollout a rollback's policy takes Collectors back from, or undefined for any other policy. */
export function rollbackSource(policy: Pick<Policy, 'name' | 'description'>): string | undefined {
  if (!policy.name.startsWith('rollback-')) return undefined;
  return /^rollback of (\S+) \(fleet-upgrade rollback\)$/.exec(policy.description ?? '')?.[1];
}

/** A one-off policy (an `upgrade` or a rollback): its target is pinned once its rollout started. */
export function isOneOffPolicy(policy: Pick<Policy, 'name' | 'description'>): boolean {
  return (
    (policy.name.startsWith('upgrade-') && policy.description === ONE_OFF_DESCRIPTION) ||
    rollbackSource(policy) !== undefined
  );
}

/** The most Collectors one `upgrade` names. */
export const ONE_OFF_MAX_COLLECTORS = 10_000;

export interface OneOffRequest {
  collectors: readonly number[];
  /** `latest` or a build. */
  to: string;
  allowDowngrade: boolean;
  maxInFlight?: number;
  /** The organization the Collector ids are of (ids repeat across organizations); none: every one. */
  org?: string;
}

/** The policy a one-off request stands for (validated like a policy file). */
export function oneOffPolicy(name: string, request: OneOffRequest): Policy {
  return Policy.parse(oneOffInput(name, request));
}

function oneOffInput(name: string, request: OneOffRequest): PolicyInput {
  return {
    name,
    description: ONE_OFF_DESCRIPTION,
    target: request.to,
    allowDowngrade: request.allowDowngrade,
    ...(request.org === undefined ? {} : { orgs: [request.org] }),
    select: { ids: [...request.collectors] },
    maxInFlight: request.maxInFlight ?? Math.min(10, request.collectors.length),
  };
}

export class OneOffPolicies {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Writes a one-off policy; returns its name (`upgrade-<time>-<random>`). */
  async add(request: OneOffRequest, createdBy: string, now: number): Promise<string> {
    return this.addPolicy('upgrade', (name) => oneOffInput(name, request), createdBy, now);
  }

  /**
   * Writes the policy `input` makes of its name (`<kind>-<time>-<tag>`, the tag random unless
   * given: the same tag and time give the same name, written once), validated like a policy
   * file; returns the name.
   */
  async addPolicy(
    kind: 'upgrade' | 'rollback',
    input: (name: string) => PolicyInput,
    createdBy: string,
    now: number,
    tag = randomBytes(3).toString('hex'),
  ): Promise<string> {
    const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const name = `${kind}-${stamp}-${tag}`;
    const policy = input(name);
    Policy.parse(policy); // refuses what a policy file would refuse
    const record: OneOffRecord = { policy, createdBy, createdAt: now };
    await this.redis.hset(this.keys.oneOffs, name, JSON.stringify(record));
    return name;
  }

  /** Every one-off policy, parsed; one that no longer parses is logged and left out. */
  async list(logger?: Logger): Promise<Policy[]> {
    return parseOneOffs(await this.redis.hgetall(this.keys.oneOffs), logger);
  }

  /** Pins a one-off's target to the build its rollout started with. */
  async pin(name: string, build: string): Promise<void> {
    const raw = await this.redis.hget(this.keys.oneOffs, name);
    if (!raw) return;
    const record = JSON.parse(raw) as OneOffRecord;
    if (record.policy.target === build) return;
    record.policy.target = build;
    await this.redis.hset(this.keys.oneOffs, name, JSON.stringify(record));
  }

  async remove(name: string): Promise<void> {
    await this.redis.hdel(this.keys.oneOffs, name);
  }
}

/** The one-off policies of a HGETALL, parsed, in the order they were created. */
export function parseOneOffs(raw: Record<string, string>, logger?: Logger): Policy[] {
  const out: { at: number; policy: Policy }[] = [];
  for (const [name, json] of Object.entries(raw)) {
    try {
      const record = JSON.parse(json) as OneOffRecord;
      out.push({ at: record.createdAt, policy: Policy.parse(record.policy) });
    } catch (err) {
      logger?.error({ oneOff: name, err: (err as Error).message }, 'one-off policy unreadable; left out');
    }
  }
  return out.sort((a, b) => a.at - b.at).map((o) => o.policy);
}
