/**
 * Each organization's health, as its service answers us, kept in Redis so that every process
 * and every command sees it (one hash, organization → its current problem; absent: healthy).
 * An organization whose credentials are refused, whose service is down, slow, answering 429
 * storms or answers that do not match the interface has a problem: its part of each rollout waits
 * (no scan, no pass over its listings, no admission of its Collectors) while the others go on, and
 * the scheduler probes it with a growing back-off until it answers again; then it goes on by itself.
 *
 *   healthy ──a call fails (org-wide kind)──► problem (since, reason) ──probe answers──► healthy
 *                                               └── probe fails: the next probe later (5 s, doubling, at most 5 min)
 * The probe is the organization's build list, except for a create refused with 403 (a key that
 * may read but not manage Collectors): only a create can tell that it is allowed again, so the
 * probe is one create (the admitter lets one Collector of the organization through when due).
 */

import type { Redis } from 'ioredis';
import type { ApiError, ApiErrorKind } from '../../api/index.js';
import type { Keys } from '../keys.js';

/** What is wrong with an organization, as `status`, `/readyz`, the metrics and the webhooks name it. */
export type OrgProblemKind = 'credentials' | 'unavailable' | 'rate_limited' | 'malformed' | 'unreachable';

export interface OrgProblem {
  kind: OrgProblemKind;
  /** In words: `credentials refused (401)`, `service unavailable (503)`, ... */
  reason: string;
  /** When it began (the deployment's clock). */
  since: number;
  /** When it was last seen. */
  lastAt: number;
  /** Failed probes since it began. */
  probes: number;
  /** When the scheduler may probe again. */
  nextProbeAt: number;
  /** How it is probed: the build list, or one create (a create refused with 403). */
  probe: 'list' | 'create';
  /** The Collector let through as the last create probe (its record tells how the probe went). */
  probeOf?: { rolloutId: string; key: string };
}

/** The first probe's delay after a problem, and the longest (clock ms). */
export const FIRST_PROBE_MS = 5_000;
export const MAX_PROBE_MS = 5 * 60_000;

/**
 * Whether an error of the service is the organization's (every request of it would fail the
 * same way), not one Collector's: the kind of its problem, or undefined.
 */
export function orgProblemOf(
  err: unknown,
): { kind: OrgProblemKind; reason: string; probe?: 'list' | 'create' } | undefined {
  const e = err as Partial<ApiError> | undefined;
  // Our own budget failed (its Redis, or no slot in time): nothing was asked of the service.
  if (e?.local) return undefined;
  const kind = e?.kind as ApiErrorKind | undefined;
  const status = e?.status === undefined ? '' : ` (${e.status})`;
  switch (kind) {
    case 'authentication':
      return { kind: 'credentials', reason: `credentials refused${status}` };
    case 'permission':
      return {
        kind: 'credentials',
        reason: `credentials may not manage Collectors${status}`,
        ...(e?.endpoint === 'create' ? { probe: 'create' as const } : {}),
      };
    case 'server':
      return { kind: 'unavailable', reason: `service unavailable${status}` };
    case 'rate_limited':
      return { kind: 'rate_limited', reason: `rate limited: every retry answered 429` };
    case 'protocol':
      return { kind: 'malformed', reason: 'answers that do not match the interface' };
    case 'network':
      return { kind: 'unreachable', reason: 'unreachable (connection refused or dropped)' };
    case 'timeout':
      return { kind: 'unreachable', reason: 'no answer in time' };
    default:
      return undefined;
  }
}

/** `org emea: credentials refused (401) since 2026-11-25 10:02 UTC` */
export function describeOrgProblem(org: string, p: Pick<OrgProblem, 'reason' | 'since'>): string {
  const at = new Date(p.since).toISOString().slice(0, 16).replace('T', ' ');
  return `org ${org}: ${p.reason} since ${at} UTC`;
}

/** The organizations' problems as the health hash holds them (an unreadable entry reads as healthy). */
export function parseOrgHealth(raw: Record<string, string>): Map<string, OrgProblem> {
  const out = new Map<string, OrgProblem>();
  for (const [org, json] of Object.entries(raw)) {
    try {
      out.set(org, JSON.parse(json) as OrgProblem);
    } catch {
      // The next failure writes it again.
    }
  }
  return out;
}

export class OrgHealth {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
    /**
     * Real ms after which the problems expire unless written again: given by a daemon whose
     * heartbeat keeps them alive (problems/daemon-problems.ts), so that a killed daemon's
     * problems do not linger. Default: they stay until cleared.
     */
    private readonly ttlMs?: number,
  ) {}

  /** Writes `org`'s problem (and the hash's expiry, when it has one). */
  private async write(org: string, problem: OrgProblem): Promise<void> {
    const tx = this.redis.multi().hset(this.keys.orgHealth, org, JSON.stringify(problem));
    if (this.ttlMs !== undefined) tx.pexpire(this.keys.orgHealth, this.ttlMs);
    await tx.exec();
  }

  /** Every organization's current problem (healthy ones are absent). */
  async problems(): Promise<Map<string, OrgProblem>> {
    return parseOrgHealth(await this.redis.hgetall(this.keys.orgHealth));
  }

  /**
   * Records that a call of `org` failed with `problem`: a new problem starts now; a known one
   * keeps its start, and its next probe backs off (when `probed`: the scheduler's probe failed).
   * Returns the problem as stored, and whether it is new.
   */
  async report(
    org: string,
    problem: { kind: OrgProblemKind; reason: string; probe?: 'list' | 'create' },
    now: number,
    probed = false,
  ): Promise<{ problem: OrgProblem; started: boolean }> {
    const raw = await this.redis.hget(this.keys.orgHealth, org);
    const before = raw ? (JSON.parse(raw) as OrgProblem) : undefined;
    const probes = (before?.probes ?? 0) + (probed ? 1 : 0);
    const wait = Math.min(MAX_PROBE_MS, FIRST_PROBE_MS * 2 ** Math.min(probes, 10));
    const next: OrgProblem = {
      kind: problem.kind,
      reason: problem.reason,
      probe: problem.probe ?? before?.probe ?? 'list',
      ...(before?.probeOf ? { probeOf: before.probeOf } : {}),
      since: before?.since ?? now,
      lastAt: now,
      probes,
      nextProbeAt: probed || !before ? now + wait : before.nextProbeAt,
    };
    await this.write(org, next);
    return { problem: next, started: before === undefined };
  }

  /** A create probe was let through (Collector `key` of `rolloutId`): the next one only after a longer back-off. */
  async probing(org: string, rolloutId: string, key: string, now: number): Promise<void> {
    const raw = await this.redis.hget(this.keys.orgHealth, org);
    if (!raw) return;
    const p = JSON.parse(raw) as OrgProblem;
    const { problem } = await this.report(org, p, now, true);
    await this.write(org, { ...problem, probeOf: { rolloutId, key } });
  }

  /** The organization answers again; returns the problem it had, if any. */
  async clear(org: string): Promise<OrgProblem | undefined> {
    const [[, raw], [, removed]] = ((await this.redis
      .multi()
      .hget(this.keys.orgHealth, org)
      .hdel(this.keys.orgHealth, org)
      .exec()) ?? [
      [null, null],
      [null, 0],
    ]) as [[Error | null, string | null], [Error | null, number]];
    return removed && raw ? (JSON.parse(raw) as OrgProblem) : undefined;
  }
}
