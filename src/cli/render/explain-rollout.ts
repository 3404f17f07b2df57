/**
 * What a rollout waits for, in one sentence for `status`: the wave it is in, a bake, an analysis
 * or an approval, a freeze, a schedule or closed maintenance windows (the scheduler's `holding`), a
 * pause (by whom, when, or by its policy), a halt (the gate's criterion and counts), an abort.
 * Each names the command that ends the wait, when one does. Then what goes on beside: Collectors
 * under verification, quarantined cohorts, rollbacks. Times are on the deployment's clock
 * (`now`), shown in UTC, without the date when it is today's. Text that came from outside
 * (reasons, operator names, builds) goes through `sanitize`.
 */
import { formatInstant } from '../../policy/calendar/format-instant.js';
import type { RolloutStatus } from '../../rollout/index.js';
import {
  describeRollbackAccount,
  describeUnmatched,
  PAUSE_REASONS,
  retryable,
  sendsHealthEvents,
} from '../../rollout/index.js';
import { sanitize } from './sanitize.js';
import { versionRuleAsides } from './version-rule-lines.js';

/** Outside text on one line: control characters shown as `?`, runs of white space as one space. */
export function oneLine(text: string): string {
  return sanitize(text.replace(/\s+/g, ' ').trim());
}

/** `14:32 UTC` when `at` falls on the same day as `now`, else `2026-06-05 14:32 UTC`. */
export function formatWhen(at: number, now: number): string {
  const text = formatInstant(at);
  const day = (s: string) => s.slice(0, 10);
  return day(text) === day(formatInstant(now)) ? text.slice(11) : text;
}

/** `wave 2 of 4 (10 of 50 done)`, or undefined for a rollout of one wave. */
function waveText(r: RolloutStatus): string | undefined {
  const of = r.wave?.of ?? 1;
  if (of <= 1) return undefined;
  return `wave ${Math.min(r.wave.index + 1, of)} of ${of} (${r.done} of ${r.total} done)`;
}

const cmd = (text: string) => `\`fleet-upgrade ${text}\``;

/** The sentence under a rollout's row, or undefined when nothing holds it and there is nothing to add. */
export function explainRollout(r: RolloutStatus, now: number): string | undefined {
  const parts = [explainPhase(r, now), ...aside(r)].filter((p): p is string => Boolean(p));
  return parts.length ? parts.join('; ') : undefined;
}

/**
 * Verification and the health events' verdicts (policy `verify.healthEvents`): how Collectors under
 * verification are judged, how many a new health event made unhealthy, and a build judged by
 * heartbeat only.
 */
function healthAsides(r: RolloutStatus, verifying: number): string[] {
  const out: string[] = [];
  const health = r.settings.verify?.health !== undefined;
  const silent = health && !sendsHealthEvents(r.build);
  if (verifying > 0)
    out.push(
      `${verifying} upgraded, verifying they stay alive on the build${health && !silent ? ' and raise no new health event' : ''}`,
    );
  if (r.healthUnhealthy)
    out.push(
      `${r.healthUnhealthy} unhealthy by a new health event (the service says a Source stopped collecting; ${cmd(`report ${oneLine(r.id)}`)} names the tracker)`,
    );
  if (silent)
    out.push(
      `judged by heartbeat only: ${oneLine(r.build)} is older than 19.308-2, which sends no health events`,
    );
  return out;
}

/** What goes on beside the phase: verification, quarantined cohorts, rollbacks. */
function aside(r: RolloutStatus): string[] {
  const id = oneLine(r.id);
  const out: string[] = [];
  const verifying = r.counts.verifying ?? 0;
  out.push(...healthAsides(r, verifying));
  const held = r.quarantined ?? [];
  const cohorts = held.map((q) => `cohort ${oneLine(q.cohort)} (${q.held} held)`).join(', ');
  // `retry` refuses an aborted or superseded rollout: then say what became of the held ones.
  if (held.length)
    out.push(
      retryable(r.phase)
        ? `quarantined: ${cohorts} — ${cmd(`retry ${id} --only quarantined`)} releases`
        : `quarantined: ${cohorts}, never released: the rollout is ${r.phase}${r.phase === 'superseded' ? ", the newer build's rollout decides them" : ''}`,
    );
  if (r.unmatched?.length)
    out.push(`named but not upgraded by it: ${oneLine(describeUnmatched(r.unmatched))}`);
  out.push(...versionRuleAsides(r, oneLine));
  if (r.rollbackOf) out.push(`rolls Collectors of ${oneLine(r.rollbackOf)} back`);
  const gone = (r.rollbacks ?? []).filter((e) => e.state === 'unavailable');
  const started = (r.rollbacks ?? []).filter((e) => e.state === 'started');
  // What became of the latest request, as its rollouts stand: "rolled back" only for those back.
  const account = r.rollbackAccounts?.at(-1);
  const earlier = (r.rollbackAccounts?.length ?? 0) - 1;
  if (account)
    out.push(
      `${oneLine(describeRollbackAccount(account))}${earlier > 0 ? ` (${earlier} earlier: ${cmd(`status --json`)})` : ''}`,
    );
  else if (started.length)
    out.push(
      `rolled back: ${started.map((e) => `${e.collectors} to ${oneLine(e.build)} (${oneLine(e.policy ?? '')})`).join(', ')}`,
    );
  if (gone.length)
    out.push(
      `not rolled back: ${gone.map((e) => `${e.collectors} on ${oneLine(e.build)}, no longer offered`).join(', ')} — see ${cmd(`report ${id}`)}`,
    );
  return out;
}

function explainPhase(r: RolloutStatus, now: number): string | undefined {
  const id = oneLine(r.id);
  const underWay =
    r.inflight > 0
      ? `; ${r.inflight === 1 ? '1 task under way is followed to its end' : `${r.inflight} tasks under way are followed to their end`}`
      : '';
  switch (r.phase) {
    case 'halted':
      return `halted: ${oneLine(r.haltReason ?? 'by its failure gate')} — look at ${cmd(`report ${id}`)}, then \`resume\` or \`abort\``;
    case 'paused': {
      if (r.pauseReason === PAUSE_REASONS.policyDisabled)
        return `paused (policy disabled): set \`enabled: true\` in its policy file to go on, or ${cmd(`abort ${id}`)}`;
      if (r.pauseReason === PAUSE_REASONS.policyRemoved)
        return `paused (policy removed): put its policy file back to go on, or ${cmd(`forget ${id}`)}`;
      const by = r.pausedBy
        ? ` by ${oneLine(r.pausedBy)}`
        : r.pauseReason
          ? ` ${oneLine(r.pauseReason)}`
          : '';
      const at = r.pausedAt ? ` at ${formatWhen(r.pausedAt, now)}` : '';
      return `paused${by}${at}${underWay} — ${cmd(`resume ${id}`)} lets it go on`;
    }
    case 'aborted': {
      const why = r.abortReason ? ` (${oneLine(r.abortReason)})` : '';
      if (r.releasedAt !== undefined)
        return `aborted${why}; its policy was released at ${formatWhen(r.releasedAt, now)}: a newer build starts a new rollout${underWay}`;
      return `aborted${why}; its policy starts no newer build until the policy changes or ${cmd(`resume ${id}`)}${underWay}`;
    }
    case 'superseded':
      return r.inflight > 0 ? `superseded by a newer build${underWay}` : undefined;
    case 'running':
    case 'converged':
      return explainAdmitting(r, now, id);
  }
}

/**
 * `waiting for 2 retrying (offline, or a task refused), next try at 14:32 UTC`: the Collectors a
 * running rollout tries again later, and when the first is due, when nothing else moves (none
 * queued, none under way), as a wave does when only those are left.
 */
export function retryText(r: RolloutStatus, now: number): string | undefined {
  const n = r.counts.waiting_retry ?? 0;
  if (n === 0 || r.phase !== 'running') return undefined;
  if ((r.counts.queued ?? 0) > 0 || r.inflight > 0) return undefined;
  const next =
    r.nextRetryAt === undefined
      ? ''
      : r.nextRetryAt > now
        ? `, next try at ${formatWhen(r.nextRetryAt, now)}`
        : ', next try due now';
  return `waiting for ${n} retrying (offline, or a task refused)${next}`;
}

/** A running or converged rollout: its wave, what the waves wait for, what holds admissions. */
function explainAdmitting(r: RolloutStatus, now: number, id: string): string | undefined {
  const of = r.wave?.of ?? 1;
  const waits: string[] = [];
  const wave = waveText(r);
  if (wave && r.phase === 'running') waits.push(wave);
  if (r.wave?.waitingFor === 'bake' && r.wave.bakeUntil !== undefined) {
    waits.push(
      r.wave.bakeUntil > now
        ? `baking until ${formatWhen(r.wave.bakeUntil, now)} — ${cmd(`promote ${id}`)} ends it now`
        : `baked until ${formatWhen(r.wave.bakeUntil, now)}: the next wave opens at the scheduler's next tick`,
    );
  } else if (r.wave?.waitingFor === 'analysis') {
    waits.push(
      `analysing wave ${Math.min(r.wave.index + 1, of)} before the next (${oneLine(r.analysisVerdict ?? 'starting')}) — ${cmd(`promote ${id}`)} skips it`,
    );
  } else if (r.wave?.waitingFor === 'approval' && r.wave.approval) {
    // Approvals by several people (operator/approve.ts): who approved, how many more, who may.
    const a = r.wave.approval;
    const by = a.by.map((b) => oneLine(b.name));
    const more = Math.max(0, a.approvers - by.length);
    waits.push(
      `awaiting ${a.approvers} approvals for wave ${Math.min(r.wave.index + 2, of)}${by.length ? ` (approved by ${by.join(', ')})` : ''}: ${more} more needed${a.from ? ` from ${a.from.map(oneLine).join(', ')}` : ''} — ${cmd(`approve ${id}`)}`,
    );
  } else if (r.wave?.waitingFor === 'approval') {
    waits.push(
      `awaiting approval for wave ${Math.min(r.wave.index + 2, of)} — ${cmd(`promote ${id}`)} starts it`,
    );
  } else if (r.wave?.full && wave && r.phase === 'running') {
    waits.push('every remaining wave open (`promote --full`)');
  }
  // Nothing else holds it: what it waits for is the Collectors it tries again.
  const retries = waits.length <= 1 ? retryText(r, now) : undefined;
  if (retries) waits.push(retries);
  // `wave 2 of 4 (10 of 50 done), baking until ...; change freeze until ...`
  const text = [waits.join(', '), r.holding ? oneLine(r.holding) : ''].filter(Boolean).join('; ');
  return text || undefined;
}
