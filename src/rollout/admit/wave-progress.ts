/**
 * Where a rollout's waves stand, moved on by the scheduler at each tick (a pure step here, written
 * with a compare-and-set by the caller). A wave is open for first attempts up to its cap; once
 * all of its Collectors are admitted and every one has an outcome, it is complete, and what
 * follows it in the policy comes before the next wave:
 *
 *   wave i open ──last outcome──► completed ──bake──► baking until T ──(T)──┐
 *                                     │                                     ├──analysis──► analysing ──passed──┐
 *                                     │                                     │                                  ├──approval──► awaiting approval ──promote──► wave i+1 open
 *                                     └─────────────────────────────────────┴──────────────────────────────────┴──────────────────────────────────────────────► wave i+1 open
 * The analysis gate runs in the caller (advance-rollout.ts; a failed one halts the rollout, an
 * inconclusive one pauses it), which says here when it passed. `promote` ends a bake, an
 * analysis or an approval wait at once; `promote --full` opens every remaining wave. The last
 * wave has nothing after it.
 */
import type { PlannedWave } from '../../policy/wave-limits.js';
import { COLLECTOR_STATES, STARTED_ACTIVE_STATES, type StateCounts, sumStates } from '../collector/index.js';
import type { RolloutEventType, WaveProgress } from '../life/index.js';
import type { OutsideWaves } from './outside-waves.js';

export interface WaveNews {
  type: Extract<
    RolloutEventType,
    'wave.completed' | 'wave.started' | 'rollout.baking' | 'rollout.awaiting_approval' | 'analysis.started'
  >;
  /** The wave it is about, 1-based as people count. */
  wave: number;
  /** When a bake ends. */
  until?: number;
}

export interface WaveStep {
  /** The progress after this step (unchanged when nothing moved). */
  progress: WaveProgress;
  changed: boolean;
  news: WaveNews[];
  /** First attempts the waves allow now. */
  room: number;
}

export function progressWaves(input: {
  plan: readonly PlannedWave[];
  progress: WaveProgress;
  counts: StateCounts;
  now: number;
  /** The wave's analysis gate passed (the caller ran it). */
  analysisPassed?: boolean;
  /** Collectors outside the waves (outside-waves.ts): not counted in them. */
  outside?: OutsideWaves;
}): WaveStep {
  const { plan, counts, now } = input;
  const outside = input.outside ?? { total: 0, queued: 0 };
  const total = sumStates(counts, COLLECTOR_STATES) - outside.total;
  const started = total - ((counts.queued ?? 0) - outside.queued);
  const busy = sumStates(counts, STARTED_ACTIVE_STATES) > 0;
  const last = plan.length - 1;
  let p: WaveProgress = { ...input.progress, index: Math.min(input.progress.index, last) };
  const news: WaveNews[] = [];
  const open = (index: number) => {
    p = { index, seq: p.seq, ...(p.full ? { full: true } : {}) };
    news.push({ type: 'wave.started', wave: index + 1 });
  };
  /** After the bake: the analysis, then the approval, then the next wave. */
  const afterBake = (wave: PlannedWave): 'stop' | 'go' => {
    if (wave.analysis) {
      p = { index: p.index, seq: p.seq, waitingFor: 'analysis' };
      news.push({ type: 'analysis.started', wave: p.index + 1 });
      return 'stop';
    }
    return afterAnalysis(wave);
  };
  const afterAnalysis = (wave: PlannedWave): 'stop' | 'go' => {
    if (wave.approval) {
      const many = typeof wave.approval === 'object' ? wave.approval : undefined;
      p = {
        index: p.index,
        seq: p.seq,
        waitingFor: 'approval',
        ...(many
          ? { approval: { approvers: many.approvers, ...(many.from ? { from: many.from } : {}), by: [] } }
          : {}),
      };
      news.push({ type: 'rollout.awaiting_approval', wave: p.index + 1 });
      return 'stop';
    }
    open(p.index + 1);
    return 'go';
  };
  for (let guard = 0; guard <= plan.length + 1; guard++) {
    const wave = plan[p.index] as PlannedWave;
    if (p.full) break;
    if (p.waitingFor === 'bake') {
      if ((p.bakeUntil ?? 0) > now) break;
      if (afterBake(wave) === 'stop') break;
      continue;
    }
    if (p.waitingFor === 'analysis') {
      if (!input.analysisPassed || !wave.analysis) {
        // A gate removed from the policy meanwhile holds nothing.
        if (wave.analysis) break;
      }
      if (afterAnalysis(wave) === 'stop') break;
      continue;
    }
    if (p.waitingFor === 'approval') break;
    const complete = p.index < last && started >= wave.cap && !busy;
    if (!complete) break;
    news.push({ type: 'wave.completed', wave: p.index + 1 });
    if (wave.bakeMs) {
      p = { index: p.index, seq: p.seq, waitingFor: 'bake', bakeUntil: now + wave.bakeMs };
      news.push({ type: 'rollout.baking', wave: p.index + 1, until: p.bakeUntil as number });
      continue;
    }
    if (afterBake(wave) === 'stop') break;
  }
  const cap = p.full ? total : p.waitingFor ? started : (plan[p.index] as PlannedWave).cap;
  const changed =
    JSON.stringify(p) !== JSON.stringify({ ...input.progress, index: Math.min(input.progress.index, last) });
  return { progress: p, changed: changed || news.length > 0, news, room: Math.max(0, cap - started) };
}

/** The progress after an operator's promote, or undefined when nothing waits (and not `full`). */
export function promoted(
  progress: WaveProgress,
  planLength: number,
  full: boolean,
): WaveProgress | undefined {
  if (full) return { index: Math.max(progress.index, planLength - 1), seq: progress.seq, full: true };
  if (!progress.waitingFor) return undefined;
  return { index: Math.min(progress.index + 1, planLength - 1), seq: progress.seq };
}
