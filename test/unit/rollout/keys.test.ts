/**
 * Redis keys: every key of a deployment shares the prefix and one cluster hash tag, so that the
 * Lua scripts touching several keys work on Redis Cluster, and deployments sharing a Redis never
 * see each other's keys or messages.
 */
import { describe, expect, it } from 'vitest';
import { keySlot } from '../../../src/lib/redis/create-redis.js';
import { createKeys, type Keys } from '../../../src/rollout/index.js';

/** The part of a key Redis Cluster hashes: the first {...} with something inside. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

const ID = 'linux-fleet@19.470-4';

/** Every key, by the name of what makes it (a test fails when Keys grows and this does not). */
function keysOf(k: Keys): Record<Exclude<keyof Keys, 'slotFreedChannel'>, string> {
  return {
    bullPrefix: `${k.bullPrefix}:upgrades:wait`,
    apiBudget: `${k.apiBudget}api-budget:{abc}:rate`,
    rollouts: k.rollouts,
    policies: k.policies,
    followed: k.followed,
    oneOffs: k.oneOffs,
    rollbackRequests: k.rollbackRequests,
    forgotten: k.forgotten,
    rollout: k.rollout(ID),
    results: k.results(ID),
    counts: k.counts(ID),
    waveCounts: k.waveCounts(ID),
    queued: k.queued(ID),
    retries: k.retries(ID),
    reconciling: k.reconciling(ID),
    verifying: k.verifying(ID),
    cohortCounts: k.cohortCounts(ID),
    slots: k.slots('linux-fleet'),
    orgSlots: k.orgSlots('linux-fleet', 'emea'),
    orgCounts: k.orgCounts(ID),
    outcomes: k.outcomes(ID),
    orgHealth: k.orgHealth,
    buildsSeen: k.buildsSeen('emea'),
    targetWaits: k.targetWaits,
    daemonProblems: k.daemonProblems,
    durations: k.durations(ID),
    kindDurations: k.kindDurations(ID),
    history: k.history(ID),
    outbox: k.outbox,
    audit: k.audit,
    auditDropped: k.auditDropped,
    leader: k.leader,
    processes: k.processes,
    clock: k.clock,
    replicated: k.replicated,
    inventory: k.inventory('emea'),
    inventoryLeader: k.inventoryLeader,
  };
}

function everyKey(prefix: string): string[] {
  return Object.values(keysOf(createKeys(prefix)));
}

describe('createKeys', () => {
  it('names every key and the channel', () => {
    const k = createKeys('p:');
    expect(Object.keys(k).sort()).toEqual([...Object.keys(keysOf(k)), 'slotFreedChannel'].sort());
    expect({ ...keysOf(k), slotFreedChannel: k.slotFreedChannel }).toEqual({
      bullPrefix: 'p:{fleet-upgrade}:bull:upgrades:wait',
      apiBudget: 'p:{fleet-upgrade}:api-budget:{abc}:rate',
      buildsSeen: 'p:{fleet-upgrade}:builds-seen:emea',
      rollouts: 'p:{fleet-upgrade}:rollouts',
      policies: 'p:{fleet-upgrade}:policies',
      followed: 'p:{fleet-upgrade}:followed',
      oneOffs: 'p:{fleet-upgrade}:one-offs',
      rollbackRequests: 'p:{fleet-upgrade}:rollback-requests',
      forgotten: 'p:{fleet-upgrade}:forgotten',
      rollout: `p:{fleet-upgrade}:rollout:${ID}`,
      results: `p:{fleet-upgrade}:results:${ID}`,
      counts: `p:{fleet-upgrade}:counts:${ID}`,
      waveCounts: `p:{fleet-upgrade}:wave-counts:${ID}`,
      queued: `p:{fleet-upgrade}:queued:${ID}`,
      retries: `p:{fleet-upgrade}:retries:${ID}`,
      reconciling: `p:{fleet-upgrade}:reconciling:${ID}`,
      verifying: `p:{fleet-upgrade}:verifying:${ID}`,
      cohortCounts: `p:{fleet-upgrade}:cohorts:${ID}`,
      slots: 'p:{fleet-upgrade}:slots:linux-fleet',
      targetWaits: 'p:{fleet-upgrade}:target-waits',
      orgSlots: 'p:{fleet-upgrade}:org-slots:linux-fleet:emea',
      orgCounts: `p:{fleet-upgrade}:org-counts:${ID}`,
      outcomes: `p:{fleet-upgrade}:outcomes:${ID}`,
      orgHealth: 'p:{fleet-upgrade}:org-health',
      daemonProblems: 'p:{fleet-upgrade}:daemon-problems',
      durations: `p:{fleet-upgrade}:durations:${ID}`,
      kindDurations: `p:{fleet-upgrade}:kind-durations:${ID}`,
      history: `p:{fleet-upgrade}:history:${ID}`,
      outbox: 'p:{fleet-upgrade}:outbox',
      audit: 'p:{fleet-upgrade}:audit',
      auditDropped: 'p:{fleet-upgrade}:audit-dropped',
      leader: 'p:{fleet-upgrade}:leader',
      processes: 'p:{fleet-upgrade}:processes',
      clock: 'p:{fleet-upgrade}:clock',
      replicated: 'p:{fleet-upgrade}:replicated',
      inventory: 'p:{fleet-upgrade}:inventory:emea',
      inventoryLeader: 'p:{fleet-upgrade}:inventory-leader',
      slotFreedChannel: 'p:{fleet-upgrade}:slot-freed',
    });
    expect(createKeys().rollouts).toBe('{fleet-upgrade}:rollouts');
  });

  it('puts every key in one hash slot, after the prefix', () => {
    for (const prefix of ['', 'staging:', 'test:1a2b3c:']) {
      const keys = everyKey(prefix);
      expect(new Set(keys.map(hashTag))).toEqual(new Set(['fleet-upgrade']));
      for (const key of keys) expect(key.startsWith(`${prefix}{fleet-upgrade}:`)).toBe(true);
    }
  });

  it('puts every key in one Cluster slot, as Redis computes it (CRC16 of the tag, mod 16384)', () => {
    // Redis's own figures: CLUSTER KEYSLOT foo = 12182; CRC16/XMODEM('123456789') = 0x31C3.
    expect(keySlot('foo')).toBe(12182);
    expect(keySlot('123456789')).toBe(0x31c3);
    expect(keySlot('{user1000}.following')).toBe(keySlot('user1000'));
    // Redis's rules: the first '{' and the first '}' after it; an empty tag hashes the whole key.
    expect(keySlot('foo{{bar}}zap')).toBe(keySlot('{bar'));
    expect(keySlot('foo{}{bar}')).not.toBe(keySlot('bar'));
    for (const prefix of ['', 'staging:', 'test:1a2b3c:']) {
      const slots = new Set([...everyKey(prefix), createKeys(prefix).slotFreedChannel].map(keySlot));
      expect([...slots]).toEqual([keySlot('fleet-upgrade')]);
    }
  });

  it('gives every kind of key, rollout and policy its own name', () => {
    const k = createKeys('p:');
    const keys = [...everyKey('p:'), k.slotFreedChannel];
    expect(new Set(keys).size).toBe(keys.length);
    for (const of of [
      k.rollout,
      k.results,
      k.counts,
      k.waveCounts,
      k.queued,
      k.retries,
      k.reconciling,
      k.durations,
      k.history,
    ]) {
      expect(of('a@1')).not.toBe(of('b@1'));
      expect(of('a@1')).not.toBe(of('a@2'));
    }
    expect(k.slots('a')).not.toBe(k.slots('b'));
  });

  it('keeps deployments that share a Redis apart, their channels too', () => {
    const a = new Set([...everyKey('a:'), createKeys('a:').slotFreedChannel]);
    for (const key of [...everyKey('b:'), createKeys('b:').slotFreedChannel]) expect(a.has(key)).toBe(false);
  });
});
