/**
 * The one place where an event's sentence (for people: `history`, webhooks, chat) and its detail
 * (for machines) are made from its facts (rollout-events.ts), with the small words they share
 * (a summary of counts, `3 Collectors`).
 */
import { COLLECTOR_STATES, type StateCounts } from '../collector/index.js';
import type { AnalysisFacts, DaemonProblemFacts, RolloutNews, WaveFacts } from './rollout-events.js';
import { describeUnmatched } from './rollout-record.js';

/** `12 succeeded, 1 failed, 2 not_alive`, in the states' order. */
export function summary(counts: StateCounts): string {
  const parts = COLLECTOR_STATES.filter((s) => (counts[s] ?? 0) > 0).map((s) => `${counts[s]} ${s}`);
  return parts.length ? parts.join(', ') : 'no Collectors';
}

/** `1 Collector`, `3 Collectors`. */
export function collectors(n: number): string {
  return `${n} Collector${n === 1 ? '' : 's'}`;
}

const ISO = (ms: number) => new Date(ms).toISOString();

/** The sentence and the detail of an event of rollout `id`: the one place both are written. */
export function describeEvent(
  id: string,
  news: RolloutNews,
): { message: string; detail?: Record<string, unknown> } {
  const promote = `\`fleet-upgrade promote ${id}\``;
  switch (news.type) {
    case 'rollout.started':
      return {
        message: `${id} started: ${news.policy} to ${news.build}`,
        detail: news.replaced ? { replaced: news.replaced } : {},
      };
    case 'rollout.superseded':
      return { message: `${id} superseded by ${news.by}`, detail: { by: news.by } };
    case 'wave.started':
      return { message: `${id}: wave ${news.wave} of ${news.of} started`, detail: wave(news) };
    case 'wave.completed':
      return {
        message: `${id}: wave ${news.wave} of ${news.of} completed (${summary(news.counts)})`,
        detail: wave(news),
      };
    case 'rollout.baking':
      return {
        message: `${id}: wave ${news.wave} of ${news.of} baking until ${ISO(news.until)}; ${promote} ends it now`,
        detail: { ...wave(news), until: news.until },
      };
    case 'analysis.started':
      return {
        message: `${id}: wave ${news.wave} of ${news.of} done; its analysis gate runs before the next wave (${promote} skips it)`,
        detail: wave(news),
      };
    case 'rollout.awaiting_approval':
      return {
        message: `${id}: wave ${news.wave} of ${news.of} done, awaiting approval: ${promote} starts the next wave`,
        detail: wave(news),
      };
    case 'rollout.approved':
      return {
        message:
          news.needed > 0
            ? `${id}: wave ${news.wave} of ${news.of} approved by ${news.actor} (${news.approvers.length} of ${news.approvers.length + news.needed}); ${news.needed} more approval${news.needed === 1 ? '' : 's'} needed: \`fleet-upgrade approve ${id}\``
            : `${id}: wave ${news.wave} of ${news.of} approved by ${news.approvers.join(' and ')}: it opens now`,
        detail: { wave: news.wave, approvers: news.approvers, needed: news.needed },
      };
    case 'rollout.promoted': {
      const what = news.full
        ? 'every remaining wave opens now'
        : `wave ${news.wave} of ${news.of} opens now${news.ended === 'bake' ? ' (the bake was cut short)' : news.ended === 'analysis' ? ' (its analysis skipped)' : ''}${news.afterResume ? `, once the rollout is resumed (\`fleet-upgrade resume ${id}\`)` : ''}`;
      return {
        message: `${id} promoted by ${news.actor}: ${what}`,
        detail: { full: news.full, wave: news.wave, ended: news.ended },
      };
    }
    case 'rollout.halted':
      return {
        message: `${id} halted by its failure gate: ${news.criterion}.${news.rollbackWave !== undefined ? ` Wave ${news.rollbackWave}'s upgraded and unhealthy Collectors go back to their previous builds.` : ''} Look at \`fleet-upgrade report ${id}\`, then \`fleet-upgrade resume ${id}\` or \`abort\``,
        detail: { criterion: news.criterion, counts: news.counts, onTrip: news.onTrip },
      };
    case 'rollout.paused':
      if (news.org !== undefined)
        return {
          message: `${id}: org ${news.org} paused by ${news.actor}: nothing new starts there; tasks under way finish; the other organizations go on`,
          detail: { org: news.org },
        };
      return {
        message:
          news.source === 'operator'
            ? `${id} paused by ${news.actor}: nothing new starts; tasks under way finish`
            : `${id} paused: ${news.reason}; nothing new starts until the policy is back`,
      };
    case 'rollout.resumed':
      if (news.released === 'abort')
        return {
          message: `${id} stays aborted; its policy is released: a newer build starts a new rollout`,
          detail: { released: 'abort' },
        };
      if (news.released === 'policy') return { message: `${id} runs again: its policy is back` };
      if (news.released === 'org')
        return {
          message: `${id}: org ${news.org} resumed by ${news.actor}`,
          detail: { released: 'org', org: news.org },
        };
      return {
        message: `${id} resumed by ${news.actor}: released ${news.what}`,
        detail: { released: news.released },
      };
    case 'rollout.aborted':
      return {
        message: `${id} aborted (${news.reason}): ${collectors(news.aborted)} that had not started end aborted; tasks under way finish`,
        detail: { aborted: news.aborted, reason: news.reason },
      };
    case 'rollout.converged': {
      // Outcomes nobody can know wait for a person: say where they are and what resolves them.
      const unknown = news.counts.unknown ?? 0;
      const hint = unknown
        ? `; ${collectors(unknown)} of unknown outcome (a create cut off before its answer): \`fleet-upgrade report ${id} --worklist\`, \`fleet-upgrade retry ${id} --only unknown\``
        : '';
      return { message: `${id} converged: ${summary(news.counts)}${hint}`, detail: { counts: news.counts } };
    }
    case 'rollout.reopened':
      return {
        message: `${id} runs again: ${collectors(news.active)} to move (${summary(news.counts)})`,
        detail: { counts: news.counts, active: news.active },
      };
    case 'rollout.retried': {
      const n = news.released.length;
      return {
        message: `${id}: ${collectors(news.retried)}${news.org === undefined ? '' : ` of org ${news.org}`} ${news.retried === 1 ? 'gets' : 'get'} one new attempt (${news.only.join(', ')})${n ? `; cohort${n > 1 ? 's' : ''} ${news.released.join(', ')} released from quarantine` : ''}${news.waits ? '; they start once the rollout is resumed' : ''}`,
        detail: {
          retried: news.retried,
          byState: news.byState,
          ...(n ? { released: news.released } : {}),
          ...(news.org === undefined ? {} : { org: news.org }),
        },
      };
    }
    case 'collectors.failed':
      return {
        message: `${id}: ${news.new} more ${news.new === 1 ? 'Collector' : 'Collectors'} failed (${news.total} in all: ${summary(news.byState)}); \`fleet-upgrade report ${id}\` has their messages`,
        detail: { new: news.new, total: news.total, byState: news.byState, byClass: news.byClass },
      };
    case 'collectors.unmatched':
      return {
        message: `${id}: ${news.collectors.length} named ${news.collectors.length === 1 ? 'Collector is' : 'Collectors are'} not upgraded by it: ${describeUnmatched(news.collectors)}; \`fleet-upgrade report ${id}\` lists them`,
        detail: { collectors: news.collectors },
      };
    case 'rollback.requested':
      return {
        message: `${id}: rollback of ${collectors(news.collectors)}${news.org === undefined ? '' : ` of org ${news.org}`} (${news.states.join(', ')}) to their previous builds requested; the daemon starts it at its next round (\`fleet-upgrade status\`)`,
        detail: {
          states: news.states,
          collectors: news.collectors,
          ...(news.org === undefined ? {} : { org: news.org }),
        },
      };
    case 'rollback.started':
      return {
        message: `${id}: ${collectors(news.collectors)}${news.org === undefined ? '' : ` of org ${news.org}`} ${news.collectors === 1 ? 'goes' : 'go'} back to ${news.build} in rollout ${news.policy}@${news.build} (${news.reason})`,
        detail: {
          build: news.build,
          collectors: news.collectors,
          policy: news.policy,
          states: news.states,
          ...(news.org === undefined ? {} : { org: news.org }),
        },
      };
    case 'rollback.unavailable':
      return {
        message: `${id}: ${collectors(news.collectors)}${news.org === undefined ? '' : ` of org ${news.org}`} ${news.collectors === 1 ? 'was' : 'were'} on ${news.build}, which the service no longer offers: not rolled back (ids in \`fleet-upgrade report ${id}\`)`,
        detail: {
          build: news.build,
          collectors: news.collectors,
          ids: news.ids,
          ...(news.org === undefined ? {} : { org: news.org }),
        },
      };
    case 'cohort.quarantined':
      return {
        message: `${id}: cohort ${news.cohort} quarantined, ${news.held} of its Collectors held while the others go on: ${news.reason}. \`fleet-upgrade retry ${id} --only quarantined\` releases it`,
        detail: { cohort: news.cohort, held: news.held, reason: news.reason },
      };
    case 'analysis.passed':
      return { message: `${id}: ${news.reason}`, detail: analysis(news) };
    case 'org.waiting':
      return {
        message: `${id}: org ${news.org} waits: ${news.reason} since ${ISO(news.since)}; the other organizations go on, and it goes on by itself once its service answers`,
        detail: { org: news.org, reason: news.reason, since: news.since },
      };
    case 'org.recovered':
      return {
        message: `${id}: org ${news.org} goes on: its service answers again (it had ${news.reason} since ${ISO(news.since)})`,
        detail: { org: news.org, reason: news.reason, since: news.since },
      };
    case 'ring.waiting':
      return {
        message: `${id} waits for ring ${news.after}: ${news.text}`,
        detail: {
          after: news.after,
          reason: news.reason,
          ...(news.until === undefined ? {} : { until: news.until }),
        },
      };
    case 'ring.released':
      return {
        message: `${id}: ring ${news.after} released ${buildOfId(id)} (converged ${ISO(news.convergedAt)}, soaked, requirements met); it starts here`,
        detail: { after: news.after, convergedAt: news.convergedAt },
      };
    case 'ring.paused':
      return {
        message: `${id} paused: ${news.text}; nothing new starts here until ${news.after} runs the build again (or \`fleet-upgrade resume ${id}\`); tasks under way finish`,
        detail: { after: news.after, reason: news.reason },
      };
    case 'ring.resumed':
      return {
        message: `${id} runs again: ring ${news.after} runs ${buildOfId(id)} again`,
        detail: { after: news.after },
      };
    case 'daemon.problem':
      return {
        message: `${id}: the daemon has a problem since ${ISO(news.since)} (${news.kind} ${news.subject}): ${news.reason}; ${news.fix}`,
        detail: problemDetail(news),
      };
    case 'daemon.problem_ended':
      return {
        message: `${id}: the daemon's problem is over (${news.kind} ${news.subject}, since ${ISO(news.since)}: ${news.reason})`,
        detail: problemDetail(news),
      };
    case 'analysis.failed':
    case 'analysis.inconclusive':
      return {
        message: `${id} ${news.phase}: ${news.reason}. \`fleet-upgrade resume ${id}\` analyses again; \`promote\` then \`resume\` skips the analysis; \`abort\` ends the rollout`,
        detail: analysis(news),
      };
  }
}

const buildOfId = (id: string) => id.slice(id.indexOf('@') + 1);
const problemDetail = (n: DaemonProblemFacts) => ({
  kind: n.kind,
  subject: n.subject,
  reason: n.reason,
  fix: n.fix,
  since: n.since,
});
const wave = (n: WaveFacts) => ({ wave: n.wave, of: n.of });
const analysis = (n: AnalysisFacts) => ({ wave: n.wave, verdict: n.verdict, queries: n.queries });
