/**
 * A step of a rollout's tick: its waves move on (admit/wave-progress.ts, a pure step), a wave
 * that waits for its analysis gate is analysed (gates/wave-analysis.ts), and the new progress is
 * written with its events in one compare-and-set (a `promote` that came first wins). Answers how
 * many first attempts the waves allow now.
 */
import { wavePlan } from '../../policy/wave-limits.js';
import { outsideWaves, progressWaves } from '../admit/index.js';
import { COLLECTOR_STATES, type StateCounts, sumStates } from '../collector/index.js';
import { analyseWave } from '../gates/index.js';
import type { RolloutDraft, RolloutNews } from '../life/index.js';
import type { RolloutPass, TickContext } from './tick-context.js';

export async function moveWaves(
  deps: Pick<TickContext, 'rollouts' | 'logger' | 'store'>,
  draft: RolloutDraft,
  pass: Pick<RolloutPass, 'policy' | 'now'>,
  counts: StateCounts,
): Promise<number> {
  const { policy, now } = pass;
  const rollout = draft.view;
  // Collectors below minimumBuild, and those a known issue held, are outside the waves.
  const outside = await outsideWaves(deps.store, rollout);
  const total = sumStates(counts, COLLECTOR_STATES) - outside.total;
  const plan = wavePlan(policy.waves, total, rollout.canaries, policy.analysis);
  let analysisPassed = false;
  const gate = plan[rollout.wave.index]?.analysis;
  if (rollout.wave.waitingFor === 'analysis' && gate) {
    const result = await analyseWave(deps, draft, gate, now);
    if (result === 'stopped') return 0;
    analysisPassed = result === 'passed';
  }
  const progress = draft.view.wave;
  const step = progressWaves({ plan, progress, counts, now, analysisPassed, outside });
  const of = plan.length;
  if (!step.changed && progress.of === of) return step.room;
  const news: RolloutNews[] = step.news.map((n) => {
    const wave = { source: 'scheduler' as const, wave: n.wave, of };
    if (n.type === 'wave.completed') return { type: n.type, ...wave, counts };
    if (n.type === 'rollout.baking') return { type: n.type, ...wave, until: n.until ?? now };
    return { type: n.type, ...wave };
  });
  const written = await deps.rollouts.setWave(draft.view, progress.seq, { ...step.progress, of }, now, news);
  if (!written) return 0;
  draft.took(written.rollout);
  return step.room;
}
