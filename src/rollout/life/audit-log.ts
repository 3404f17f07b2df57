/**
 * The audit trail: one record per control request (allowed or refused, over HTTP or by the CLI on
 * Redis) and per policy file change the daemon loads, in one Redis stream whose ids are Redis's
 * own time. Append-only; bounded by a size cap and a retention (lua/append-audit.lua), each
 * counting what it dropped.
 *
 * An action that writes a rollout carries its record into its own atomic step (rollout-store.ts
 * `audited`: write-rollout-6.lua and forget-rollout-22.lua append it before anything else): a kill of
 * a process cannot leave the action without its record, nor a record of an action that was not
 * done. Refusals and what writes no rollout are appended alone (`append`).
 *
 * A record never holds a token: who is a name (`alice`, `admin`, `local:<user>@<host>`, a proxy's
 * user), never how they proved it.
 */
import type { Redis } from 'ioredis';
import { defineScripts } from '../../lib/redis/redis-scripts.js';
import type { Keys } from '../keys.js';

/** Default retention of audit records: 400 days. */
export const AUDIT_RETENTION_MS = 400 * 24 * 3_600_000;
/** Default size cap of the audit stream (the oldest are dropped, and counted, past it). */
export const AUDIT_MAX_RECORDS = 1_000_000;
/** Records read per round trip by `read`: what one page holds in memory. */
export const AUDIT_PAGE = 500;

/** How the person was known. */
export type AuditVia = 'token' | 'proxy' | 'loopback' | 'local' | 'daemon';

/** One audit record as written (its time is its stream id's). */
export interface AuditRecord {
  /** Who: a user's name, `admin` (the control token), `local:<user>@<host>`, `daemon`. */
  who: string;
  via: AuditVia;
  /** The caller's address (HTTP), or the host (`local`). */
  from?: string;
  /** The authenticating proxy's address, when the person came through one. */
  proxy?: string;
  /** What was asked: `pause`, `forget`, `upgrade`, `approve`, `policy.changed`, ... */
  what: string;
  rollout?: string;
  orgs?: string[];
  answer: 'allowed' | 'refused';
  /** The HTTP status answered (200, 401, 403, 409...), or the CLI's exit code's kind. */
  status?: number;
  /** Why it was refused, or what changed (a policy file's old and new digests). */
  reason?: string;
  /** A policy file change: the file, and its digests before and after. */
  file?: string;
  oldDigest?: string;
  newDigest?: string;
}

/** A record as read: with its stream id and its time (ms). */
export type AuditEntry = AuditRecord & { id: string; at: number };

/** The bounds of the stream. */
export interface AuditBounds {
  maxRecords: number;
  retentionMs: number;
}

export const DEFAULT_AUDIT_BOUNDS: AuditBounds = {
  maxRecords: AUDIT_MAX_RECORDS,
  retentionMs: AUDIT_RETENTION_MS,
};

/**
 * An action's record on its way into the action's own step: the first rollout write (or forget)
 * that succeeds carries it and marks it `written`; a write that is refused carries it not.
 */
export interface AuditNote {
  record: AuditRecord;
  bounds: AuditBounds;
  written: boolean;
}

/** What `read` keeps. */
export interface AuditFilter {
  /** Only records at or after this time (ms). */
  sinceMs?: number;
  user?: string;
  rollout?: string;
}

type Scripted = Redis & {
  fuWriteAudit(stream: string, dropped: string, json: string, cap: number, keepMs: number): Promise<number>;
};

/** The arguments of an audit record in a write's step: JSON ('' none), cap, retention. */
export function auditArgs(note: AuditNote | undefined): [string, number, number] {
  if (!note || note.written) return ['', 0, 0];
  return [JSON.stringify(note.record), note.bounds.maxRecords, note.bounds.retentionMs];
}

export class AuditLog {
  private readonly redis: Scripted;

  constructor(
    redis: Redis,
    private readonly keys: Keys,
    readonly bounds: AuditBounds = DEFAULT_AUDIT_BOUNDS,
  ) {
    this.redis = redis as Scripted;
  }

  /** Appends a record alone (a refusal; what writes no rollout; a policy file change). */
  async append(record: AuditRecord): Promise<void> {
    // Defined at first use: a note (for an action's own step) needs no script of its own.
    defineScripts(this.redis, [{ command: 'fuWriteAudit', module: 'rollout/life', name: 'write-audit-2' }]);
    await this.redis.fuWriteAudit(
      this.keys.audit,
      this.keys.auditDropped,
      JSON.stringify(record),
      this.bounds.maxRecords,
      this.bounds.retentionMs,
    );
  }

  /** A note for an action's own step (rollout-store.ts `audited`). */
  note(record: AuditRecord): AuditNote {
    return { record, bounds: this.bounds, written: false };
  }

  /** What the bounds dropped so far. */
  async dropped(): Promise<{ cap: number; retention: number }> {
    const raw = await this.redis.hgetall(this.keys.auditDropped);
    return { cap: Number(raw.cap ?? 0), retention: Number(raw.retention ?? 0) };
  }

  /**
   * The records that pass `filter`, oldest first, read a page at a time: memory holds one page
   * whatever the stream's length.
   */
  async *read(filter: AuditFilter = {}, page = AUDIT_PAGE): AsyncGenerator<AuditEntry> {
    let start = filter.sinceMs === undefined ? '-' : String(Math.max(0, Math.floor(filter.sinceMs)));
    for (;;) {
      const got = await this.redis.xrange(this.keys.audit, start, '+', 'COUNT', page);
      for (const [id, fields] of got) {
        const entry = decodeEntry(id, fields);
        if (!entry) continue;
        if (filter.user !== undefined && entry.who !== filter.user) continue;
        if (filter.rollout !== undefined && entry.rollout !== filter.rollout) continue;
        yield entry;
      }
      if (got.length < page) return;
      start = `(${(got[got.length - 1] as [string, string[]])[0]}`;
    }
  }
}

function decodeEntry(id: string, fields: string[]): AuditEntry | undefined {
  const at = fields.indexOf('r');
  if (at < 0 || at % 2 !== 0) return undefined;
  try {
    const record = JSON.parse(fields[at + 1] as string) as AuditRecord;
    return { id, at: Number(id.split('-')[0]), ...record };
  } catch {
    return undefined;
  }
}
