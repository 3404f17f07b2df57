/**
 * Redis keys: every key of a deployment shares the prefix and one cluster hash tag, so that the
 * Lua scripts touching several keys work on Redis Cluster, and deployments sharing a Redis never
 * see each other's keys.
 */
import { describe, expect, it } from 'vitest';
import { createKeys } from '../../../src/rollout/keys.js';

/** The part of a key Redis Cluster hashes: the first {...} with something inside. */
function hashTag(key: string): string {
  const open = key.indexOf('{');
  const close = key.indexOf('}', open + 1);
  return open >= 0 && close > open + 1 ? key.slice(open + 1, close) : key;
}

function everyKey(prefix: string): string[] {
  const k = createKeys(prefix);
  const id = 'linux-fleet@19.470-4';
  return [
    k.rollouts,
    k.rollout(id),
    k.policyRollout('linux-fleet'),
    k.results(id),
    k.counts(id),
    k.waiting(id),
    k.inflight(id),
    k.durations(id),
    k.leader,
    k.processes,
    `${k.bullPrefix}:upgrades:wait`,
  ];
}

describe('createKeys', () => {
  it('puts every key in one hash slot, after the prefix', () => {
    for (const prefix of ['', 'staging:', 'test:1a2b3c:']) {
      const keys = everyKey(prefix);
      expect(new Set(keys.map(hashTag))).toEqual(new Set(['fleet-upgrade']));
      for (const key of keys) expect(key.startsWith(`${prefix}{fleet-upgrade}:`)).toBe(true);
    }
  });

  it('gives every kind of key, rollout and policy its own name', () => {
    const keys = everyKey('p:');
    expect(new Set(keys).size).toBe(keys.length);
    const k = createKeys('p:');
    expect(k.results('a@1')).not.toBe(k.results('b@1'));
    expect(k.policyRollout('a')).not.toBe(k.policyRollout('b'));
  });

  it('keeps deployments that share a Redis apart', () => {
    const a = new Set(everyKey('a:'));
    for (const key of everyKey('b:')) expect(a.has(key)).toBe(false);
  });
});
