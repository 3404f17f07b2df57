/**
 * Resolution of Collectors in `reconciling`: the service holds (or held) a task for them whose id
 * we do not know, or whose status can no longer be read, so only the listings tell what became of
 * it:
 * - offered again for the build, on a page requested after it went to reconciling: no task runs
 *   now and the build was not reached. When a task of ours surely ran (an unreadable 202, or we
 *   had its id: `taskProven`) → `timed_out` when its attempt's first create was sent at least
 *   the service's time-out (30 minutes) before that page (the service may have timed it out),
 *   else `failed`: it ended short of the build too soon for a time-out. Otherwise (a create that
 *   went unanswered, or collector.in.upgrading: a task ran, perhaps not ours) → `unknown`:
 *   "offered again" cannot tell a create that made no task from one whose task has already ended
 *   short of the build, since the service reads a task only by the id we never got and lists no
 *   tasks by Collector. Never sent again by us (sending on that evidence gave Collectors a second
 *   task, the chaos test of issue 12): `fleet-upgrade retry` does. In a superseded rollout →
 *   `skipped`: the newer rollout takes the Collector;
 * - on the build (seen through another build's listing) → `succeeded` (`verifying` first when the
 *   policy verifies successes);
 * - neither, past the local deadline of its task → `timed_out` when a task of ours surely ran
 *   (the service still shows one running after its time-out), else `unknown`.
 * Each resolution is one atomic move that also gives the slot back.
 */
import { type BuildTarget, SERVICE_TASK_TIMEOUT_MS } from '../../api/index.js';
import type { Logger } from '../../lib/logger.js';
import {
  type CollectorKey,
  type CollectorRecord,
  collectorKey,
  DEFAULT_ORG,
  keyOf,
  type Move,
  parseCollectorKey,
  transition,
} from '../collector/index.js';
import { buildOf, type RolloutRecord } from '../life/index.js';
import { observeVersions, type ScanDeps, timedPages } from './scan-upgradable.js';

export interface ReconcileDeps extends ScanDeps {
  logger: Logger;
}

/** Why a Collector whose create went unanswered ends `unknown` when the listing offers it again. */
export const UNANSWERED_CREATE =
  'its create went unanswered and the listing offers it again: either no task was made or it ended without reaching the build, which the service cannot tell; not sent again, so that it never gets a second task in this rollout (`fleet-upgrade retry` sends a new one)';

/** Why a Collector whose task of unknown id shows nothing past its deadline ends `unknown`. */
export const UNSEEN_PAST_DEADLINE =
  'past the deadline of a task of unknown id, the listings show neither the build nor the Collector offered again: what became of the create cannot be known (`fleet-upgrade retry` sends a new one)';

/** When the attempt's first create was sent (a record from before `firstSentAt` has its last send only). */
const sentAt = (r: CollectorRecord): number => r.firstSentAt ?? r.createSentAt ?? r.requestTime ?? 0;

/**
 * Whether a proven task of unknown id, seen ended off the build by a page requested at `seenAt`,
 * can have been ended by the service's time-out: its first create was sent at least that long before.
 */
export function endedByServiceTimeout(r: CollectorRecord, seenAt: number): boolean {
  return seenAt - sentAt(r) >= SERVICE_TASK_TIMEOUT_MS;
}

const minutes = (ms: number) => `${Math.floor(ms / 60_000)} min`;

/** The local deadline of a task of unknown id: the task's timeout after its earliest possible start. */
export function reconcileDeadline(r: CollectorRecord, taskTimeoutMs: number): number {
  const start = r.requestTime ?? r.createSentAt ?? r.reconcilingSince ?? 0;
  return Math.max(start + taskTimeoutMs, r.reconcilingSince ?? 0);
}

/**
 * Resolves the rollout's `reconciling` Collectors of organization `org` (the listings read are
 * that organization's: `deps.api` is its client). `listed` is what a scan of the organization's
 * build just saw (key → clock time its page was requested); without it, the build's listing is
 * read here.
 */
export async function reconcileUnknownTasks(
  deps: ReconcileDeps,
  rollout: RolloutRecord,
  options: {
    listed?: ReadonlyMap<CollectorKey, number>;
    pageSize: number;
    targets: readonly BuildTarget[];
    org?: string;
  },
): Promise<number> {
  const { store } = deps;
  const org = options.org ?? DEFAULT_ORG;
  const build = buildOf(rollout, org);
  const keys = (await store.indexed(rollout.id, 'reconciling')).filter(
    (k) => parseCollectorKey(k).org === org,
  );
  if (keys.length === 0) return 0;
  const open = [...(await store.getMany(rollout.id, keys)).values()].filter((r) => r.state === 'reconciling');
  let listed = options.listed;
  if (!listed) {
    const wanted = new Set(open.map((r) => r.id));
    const seen = new Map<CollectorKey, number>();
    for await (const { page, requestedAt } of timedPages(deps.api, deps.clock, build, options.pageSize))
      for (const c of page) if (wanted.has(c.id)) seen.set(collectorKey(org, c.id), requestedAt);
    listed = seen;
  }
  const offered = (r: CollectorRecord) => {
    const at = listed.get(keyOf(r));
    return at !== undefined && at > (r.reconcilingSince ?? 0);
  };
  const unresolved = new Set(open.filter((r) => !offered(r)).map((r) => r.id));
  const other = options.targets.find((t) => t.version !== build)?.version;
  const versions =
    other && unresolved.size
      ? await observeVersions(deps.api, other, unresolved, options.pageSize)
      : new Map();
  const now = deps.clock.now();
  const ctx = { now, settings: rollout.settings };
  const moves: Move[] = [];
  for (const r of open) {
    let t: ReturnType<typeof transition> | undefined;
    if (offered(r) && !r.taskProven) {
      // A superseded rollout makes no new attempt: the newer one upgrades the Collector.
      t = transition(
        r,
        rollout.phase === 'superseded'
          ? { type: 'supersede', message: 'the listing offers it again: no task of this rollout runs' }
          : { type: 'outcome_unknown', message: `${r.message ? `${r.message}; ` : ''}${UNANSWERED_CREATE}` },
        ctx,
      );
    } else if (offered(r)) {
      // Ended off the build: the service's own time-out when the attempt's first create was sent
      // at least its time-out before the page that offers it again, else a failure (it ended too
      // soon for a time-out).
      const seenAt = listed.get(keyOf(r)) ?? now;
      const byTimeout = endedByServiceTimeout(r, seenAt);
      const prefix = r.message ? `${r.message}; ` : '';
      t = transition(
        r,
        byTimeout
          ? {
              type: 'timed_out',
              message: `${prefix}the listing offers it again for ${build} ${minutes(seenAt - sentAt(r))} after its first create: its task of unknown id reached the service's 30-minute time-out`,
            }
          : {
              type: 'failed',
              message: `${prefix}the listing offers it again for ${build}: its task of unknown id ended without reaching the build`,
            },
        ctx,
      );
    } else if (versions.get(r.id) === build) {
      // On the build: a success, verified like any other when the policy verifies.
      const verify = rollout.settings.verify;
      t = transition(
        r,
        verify ? { type: 'verify', dueAt: now + verify.intervalMs } : { type: 'succeeded' },
        ctx,
      );
    } else if (now > reconcileDeadline(r, rollout.settings.taskTimeoutMs)) {
      t = transition(
        r,
        r.taskProven
          ? { type: 'timed_out', message: `${r.message ? `${r.message}; ` : ''}the task did not end in time` }
          : {
              type: 'outcome_unknown',
              message: `${r.message ? `${r.message}; ` : ''}${UNSEEN_PAST_DEADLINE}`,
            },
        ctx,
      );
    }
    if (t?.ok) moves.push(t.move);
  }
  const outcomes = await store.apply(rollout.id, moves);
  let resolved = 0;
  moves.forEach((m, i) => {
    if (outcomes[i] !== 'written') return;
    resolved++;
    deps.logger.info({ rollout: rollout.id, org, collector: m.next.id, state: m.next.state }, 'reconciled');
  });
  return resolved;
}
