/**
 * One-off rollouts (`fleet-upgrade upgrade --collector ID,... --to BUILD|latest`, and the
 * rollouts of `fleet-upgrade rollback`, rollback.ts): a policy
 * written to Redis instead of a file, for the named Collectors only, run by the scheduler like any
 * policy (same budget, slots, records, report) and ahead of the files' policies, so that an
 * operator's explicit request wins over an overlapping policy. Its target is pinned to the build
 * it resolved to when it started (a newer `latest` does not restart it); once its rollout has
 * converged or was aborted, the scheduler leaves it alone; `forget` removes it.
 *
 * A one-off the daemon cannot start (its build is not offered in its organization) keeps why on
 * its record (`notStarted`), shown by `status`; the scheduler looks again after a growing wait
 * (ONE_OFF_LOOKS_MS) and gives up after the last one. Until it starts, `abort` or `forget` of it
 * (`upgrade-...` or `upgrade-...@BUILD`) removes it. A record is rewritten only while it is still
 * there (lua/set-one-off-1.lua), so a removed one-off never comes back.
 */
import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { Logger } from '../../lib/logger.js';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import { Policy, type PolicyInput } from '../../policy/schema.js';
import type { Keys } from '../keys.js';
import { type AuditNote, auditArgs, type OneOffWait } from '../life/index.js';

export type { OneOffWait };

export interface OneOffRecord {
  policy: PolicyInput;
  createdBy: string;
  createdAt: number;
  /** Why the daemon could not start it (yet), and when it looks again; absent once it started. */
  notStarted?: OneOffWait;
}

/**
 * Clock ms from a look that could not start a one-off to the next: growing, bounded; after the
 * last, the daemon gives up (about an hour and a quarter of the deployment's clock in all).
 */
export const ONE_OFF_LOOKS_MS = [30_000, 60_000, 120_000, 240_000, 480_000, 960_000, 1_920_000] as const;

/** The wait after `looks` looks that could not start a one-off (its first look counts). */
export function nextOneOffWait(before: OneOffWait | undefined, reason: string, now: number): OneOffWait {
  const looks = (before?.looks ?? 0) + 1;
  const delay = ONE_OFF_LOOKS_MS[looks - 1];
  return {
    reason,
    since: before?.since ?? now,
    looks,
    ...(delay === undefined ? { gaveUpAt: now } : { nextLookAt: now + delay }),
  };
}

/** Whether the scheduler looks at a one-off now: not while it waits for its next look, never after it gave up. */
export function oneOffDue(record: Pick<OneOffRecord, 'notStarted'> | undefined, now: number): boolean {
  const wait = record?.notStarted;
  if (!wait) return true;
  if (wait.gaveUpAt !== undefined) return false;
  return now >= (wait.nextLookAt ?? 0);
}

/** A one-off's record as stored, or undefined when it cannot be read. */
export function parseOneOffRecord(json: string | undefined): OneOffRecord | undefined {
  if (!json) return undefined;
  try {
    return JSON.parse(json) as OneOffRecord;
  } catch {
    return undefined;
  }
}

type Scripted = Redis & {
  fuSetOneOff(key: string, name: string, json: string): Promise<number>;
  fuHdelIf(key: string, field: string, value: string): Promise<number>;
  fuAddOneOff(...args: (string | number)[]): Promise<number>;
};

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
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
  ) {
    defineScripts(redis, [
      { command: 'fuSetOneOff', module: 'rollout/operator', name: 'set-one-off-1' },
      { command: 'fuHdelIf', module: 'rollout/life', name: 'hdel-if-1' },
      { command: 'fuAddOneOff', module: 'rollout/life', name: 'add-one-off-3' },
    ]);
    this.redis = redis as Scripted;
  }

  /**
   * Writes a one-off policy; returns its name (`upgrade-<time>-<random>`). With `audit`, the
   * operator's audit record it makes of the name is appended in the same step
   * (lua/add-one-off-3.lua) and marked written.
   */
  async add(
    request: OneOffRequest,
    createdBy: string,
    now: number,
    audit?: (name: string) => AuditNote,
  ): Promise<string> {
    return this.addPolicy('upgrade', (name) => oneOffInput(name, request), createdBy, now, undefined, audit);
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
    audit?: (name: string) => AuditNote,
  ): Promise<string> {
    const stamp = new Date(now).toISOString().replace(/[-:T]/g, '').slice(0, 14);
    const name = `${kind}-${stamp}-${tag}`;
    const policy = input(name);
    Policy.parse(policy); // refuses what a policy file would refuse
    const record: OneOffRecord = { policy, createdBy, createdAt: now };
    const json = JSON.stringify(record);
    const note = audit?.(name);
    if (!note) await this.redis.hset(this.keys.oneOffs, name, json);
    else {
      const k = this.keys;
      await this.redis.fuAddOneOff(k.oneOffs, k.audit, k.auditDropped, name, json, ...auditArgs(note));
      note.written = true;
    }
    return name;
  }

  /** Every one-off policy, parsed; one that no longer parses is logged and left out. */
  async list(logger?: Logger): Promise<Policy[]> {
    return parseOneOffs(await this.redis.hgetall(this.keys.oneOffs), logger);
  }

  /** Every one-off's record, as stored, by name (one that cannot be read is left out). */
  async records(): Promise<Map<string, OneOffRecord>> {
    return parseOneOffRecords(await this.redis.hgetall(this.keys.oneOffs));
  }

  /**
   * Pins a one-off's target to the build its rollout started with; it started, so why it could
   * not before is dropped.
   */
  async pin(name: string, build: string): Promise<void> {
    const raw = await this.redis.hget(this.keys.oneOffs, name);
    const record = parseOneOffRecord(raw ?? undefined);
    if (!record || (record.policy.target === build && !record.notStarted)) return;
    record.policy.target = build;
    delete record.notStarted;
    await this.redis.fuSetOneOff(this.keys.oneOffs, name, JSON.stringify(record));
  }

  /**
   * The daemon looked and could not start the one-off (`reason`): the next look is due later, or
   * never (it gave up). Written only while the one-off is still there. The wait written.
   */
  async notStarted(name: string, reason: string, now: number): Promise<OneOffWait | undefined> {
    const record = parseOneOffRecord((await this.redis.hget(this.keys.oneOffs, name)) ?? undefined);
    if (!record) return undefined;
    const wait = nextOneOffWait(record.notStarted, reason, now);
    const written = await this.redis.fuSetOneOff(
      this.keys.oneOffs,
      name,
      JSON.stringify({ ...record, notStarted: wait }),
    );
    return written ? wait : undefined;
  }

  /** Removes a one-off policy, only as it was read (`json`): true when it was removed. */
  async removeIf(name: string, json: string): Promise<boolean> {
    return (await this.redis.fuHdelIf(this.keys.oneOffs, name, json)) === 1;
  }

  async remove(name: string): Promise<void> {
    await this.redis.hdel(this.keys.oneOffs, name);
  }
}

/** The one-off records of a HGETALL, by name (one that cannot be read is left out). */
export function parseOneOffRecords(raw: Record<string, string>): Map<string, OneOffRecord> {
  const out = new Map<string, OneOffRecord>();
  for (const [name, json] of Object.entries(raw)) {
    const record = parseOneOffRecord(json);
    if (record) out.set(name, record);
  }
  return out;
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
