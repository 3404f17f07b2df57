/**
 * The daemon's own problems, kept in Redis so that `status`, `/status`, `/readyz` and the metrics
 * of every process see them: a policy file that turned invalid while `run` runs (its file, line
 * and reason), a policy whose target build the service does not offer, and a process whose time
 * scale is not the simulator's. (Credentials the service refuses are an organization's problem:
 * orgs/org-health.ts.) Each names what ends it.
 *
 *   none ──found──► problem (since) ──fixed──► none
 *                     └── its process stops: withdrawn at once; killed: expires within the TTL
 *
 * Each process writes its current problems as one field of one hash (process → JSON of its
 * problems and when they expire, on Redis's clock), again at every heartbeat (PROBLEM_HEARTBEAT_MS)
 * and at once when they change. A field not rewritten within PROBLEM_TTL_MS (three heartbeats) is
 * read as gone, and pruned by the next writer; the hash itself expires with its last writer, and so
 * does the hash of the organizations' problems. So a killed daemon's problems disappear within
 * 15 s, and a clean stop withdraws them at once.
 */
import type { Redis } from 'ioredis';
import { replies } from '../../lib/redis/pipeline-replies.js';
import type { Keys } from '../keys.js';

/** Every kind of the daemon's problems, as `status --json`, `/status` and the metrics name them. */
export const DAEMON_PROBLEM_KINDS = [
  'policy_invalid',
  'target_not_offered',
  'time_scale',
  'ring_undefined',
] as const;
export type DaemonProblemKind = (typeof DAEMON_PROBLEM_KINDS)[number];

export interface DaemonProblem {
  kind: DaemonProblemKind;
  /** What it is about: the policy file, the policy, the process. A metric label: no secret. */
  subject: string;
  /** What is wrong, in words. */
  reason: string;
  /** The command or the fix that ends it. */
  fix: string;
  /** When it began (the deployment's clock). */
  since: number;
  /** policy_invalid: the file, and the line of its first problem when known. */
  file?: string;
  line?: number;
  /** policy_invalid: the policy still in force from the file (its last valid version). */
  keeping?: string;
  /** target_not_offered: the policy, its target, the organizations that do not offer it. */
  policy?: string;
  target?: string;
  orgs?: string[];
  /** target_not_offered: the builds the service offers (newest last, at most 10). */
  offers?: string[];
  /** target_not_offered: when the daemon looks at the build list again (the deployment's clock). */
  nextCheckAt?: number;
  /** ring_undefined: the ring (`after.policy`) the policy follows, which no loaded file defines. */
  after?: string;
  /** time_scale: this process's scale, and the simulator's. */
  timeScale?: number;
  simulatorTimeScale?: number;
}

/** A problem as read back: which process has it (`run on host, pid 123`). */
export interface ReportedProblem extends DaemonProblem {
  process: string;
}

/** Real ms between two writes of a process's problems. */
export const PROBLEM_HEARTBEAT_MS = 5_000;
/** Real ms after which a process's problems that were not written again are gone (three heartbeats). */
export const PROBLEM_TTL_MS = 15_000;

interface Entry {
  process: string;
  /** Redis's clock (ms) after which the entry is gone. */
  expiresAt: number;
  problems: DaemonProblem[];
}

/** Redis's own clock, in ms, from a TIME answer. */
function timeMs(reply: unknown): number {
  // Redis's own clock decides what expired; without its answer, this process's.
  if (!Array.isArray(reply) || reply.length < 2) return Date.now();
  const [s, us] = reply as [string, string];
  return Number(s) * 1000 + Math.floor(Number(us) / 1000);
}

function parseEntry(json: string): Entry | undefined {
  try {
    const e = JSON.parse(json) as Partial<Entry>;
    return typeof e.expiresAt === 'number' && Array.isArray(e.problems) && typeof e.process === 'string'
      ? (e as Entry)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The problems of the hash's entries not expired at `nowMs` (Redis's clock), one per kind and
 * subject (two `run` processes read the same policy file), the earliest first.
 */
export function parseDaemonProblems(raw: Record<string, string>, nowMs: number): ReportedProblem[] {
  const seen = new Map<string, ReportedProblem>();
  for (const json of Object.values(raw)) {
    const entry = parseEntry(json);
    if (!entry || entry.expiresAt <= nowMs) continue;
    for (const p of entry.problems) {
      const key = `${p.kind}\u0000${p.subject}\u0000${p.reason}`;
      const before = seen.get(key);
      if (!before || p.since < before.since) seen.set(key, { ...p, process: entry.process });
    }
  }
  return [...seen.values()].sort((a, b) => a.since - b.since || a.subject.localeCompare(b.subject));
}

/** The commands of a pipeline that read the problems: TIME, then the hash (see `fromReplies`). */
export function readProblemsInto(pipe: ReturnType<Redis['pipeline']>, keys: Keys): void {
  pipe.time();
  pipe.hgetall(keys.daemonProblems);
}

/** The problems from the replies of `readProblemsInto`'s two commands. */
export function problemsFromReplies(time: unknown, hash: unknown): ReportedProblem[] {
  return parseDaemonProblems((hash ?? {}) as Record<string, string>, timeMs(time));
}

export class DaemonProblems {
  constructor(
    private readonly redis: Redis,
    private readonly keys: Keys,
  ) {}

  /** Every process's current problems. */
  async read(): Promise<ReportedProblem[]> {
    const pipe = this.redis.pipeline();
    readProblemsInto(pipe, this.keys);
    const [time, hash] = replies(await pipe.exec());
    return problemsFromReplies(time, hash);
  }

  /**
   * Writes the current problems of process `id` (none: its field goes), valid for `ttlMs`; prunes
   * the fields of processes that stopped writing, and keeps the hash alive as long as its writers.
   */
  async publish(
    id: string,
    process: string,
    problems: readonly DaemonProblem[],
    ttlMs = PROBLEM_TTL_MS,
  ): Promise<void> {
    const key = this.keys.daemonProblems;
    const [time, raw] = replies(await this.redis.multi().time().hgetall(key).exec());
    const now = timeMs(time);
    const stale = Object.entries((raw ?? {}) as Record<string, string>)
      .filter(([field, json]) => field !== id && (parseEntry(json)?.expiresAt ?? 0) <= now)
      .map(([field]) => field);
    const tx = this.redis.multi();
    if (stale.length) tx.hdel(key, ...stale);
    if (problems.length) {
      const entry: Entry = { process, expiresAt: now + ttlMs, problems: [...problems] };
      tx.hset(key, id, JSON.stringify(entry));
    } else tx.hdel(key, id);
    // The hash outlives its last writer by one TTL at most; so do the organizations' problems
    // (orgs/org-health.ts): a killed daemon's refused credentials do not linger either.
    tx.pexpire(key, ttlMs);
    tx.pexpire(this.keys.orgHealth, ttlMs);
    await tx.exec();
  }

  /** Process `id` stopped: its problems go at once. */
  async withdraw(id: string): Promise<void> {
    await this.redis.hdel(this.keys.daemonProblems, id);
  }
}
