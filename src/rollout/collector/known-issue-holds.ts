/**
 * The one known-issue matcher of a rollout: a Collector that a known issue of its build holds back
 * (the policy's `knownIssues`, matched by policy/select/known-issue-match.ts) moves to `skipped` or
 * `manual` with the issue's note, whether it is seen so at discovery (listings/scan-upgradable.ts:
 * it never waits in the queue) or when its turn comes (admit/admit.ts: queued, or a retry). The
 * moves are written each action with its counter (`knownIssueSkipped`, `knownIssueManual`).
 */
import type { KnownIssue } from '../../policy/known-issues.js';
import type { Policy } from '../../policy/schema.js';
import { knownIssueFor } from '../../policy/select/known-issue-match.js';
import type { SelectableCollector } from '../../policy/select/select-collectors.js';
import type { CollectorRecord } from './collector-record.js';
import type { CollectorStore } from './collector-store.js';
import { type LifeSettings, type Move, transition } from './transition.js';

/** A known issue's hold of a Collector: its action, and its move (absent when its state allows none). */
export interface KnownIssueHold {
  action: KnownIssue['action'];
  move?: Move;
}

/**
 * The hold of `record` when a known issue of its target build matches `collector` (its facts: the
 * listing's at discovery, its record's later); undefined when none does.
 */
export function knownIssueHold(
  policy: Pick<Policy, 'knownIssues'>,
  record: CollectorRecord,
  collector: SelectableCollector,
  ctx: { now: number; settings: LifeSettings },
): KnownIssueHold | undefined {
  const issue = knownIssueFor(policy, collector, record.to);
  if (!issue) return undefined;
  const t = transition(record, { type: 'known_issue', action: issue.action, note: issue.note }, ctx);
  return { action: issue.action, ...(t.ok ? { move: t.move } : {}) };
}

/** Writes the holds' moves, each action counted by the store. */
export async function writeKnownIssueHolds(
  store: Pick<CollectorStore, 'apply'>,
  rolloutId: string,
  moves: { skip: readonly Move[]; manual: readonly Move[] },
): Promise<void> {
  if (moves.skip.length) await store.apply(rolloutId, moves.skip, { countWritten: 'knownIssueSkipped' });
  if (moves.manual.length) await store.apply(rolloutId, moves.manual, { countWritten: 'knownIssueManual' });
}
