/**
 * The analysis gate of a wave (src/analysis), run by the scheduler while the rollout's waves wait
 * for it (wave-progress.ts, `waitingFor: analysis`). Each tick measures the queries that are due
 * and stores the run on the rollout (with the wave it belongs to, so a crash never carries one
 * wave's verdict into the next). The verdict:
 * - running: the next wave waits;
 * - passed: the waves go on (approval, or the next wave);
 * - failed: the rollout is halted, as by its failure gate;
 * - inconclusive (no data, NaN, an error): the rollout is paused; not knowing never lets a wave
 *   through. `resume` runs the analysis again; `promote` (then `resume`) skips it.
 */
import { advanceAnalysis, type MeasureQuery, startAnalysis } from '../../analysis/index.js';
import type { Logger } from '../../lib/logger.js';
import type { AnalysisGate } from '../../policy/analysis.js';
import type { RolloutDraft, RolloutPatch, RolloutStore } from '../life/index.js';

export type WaveAnalysisResult = 'running' | 'passed' | 'stopped';

export async function analyseWave(
  deps: { rollouts: RolloutStore; logger: Logger; measure?: MeasureQuery },
  draft: RolloutDraft,
  gate: AnalysisGate,
  now: number,
): Promise<WaveAnalysisResult> {
  const rollout = draft.view;
  const wave = rollout.wave.index;
  const mine = rollout.analysisRun && rollout.analysisWave === wave ? rollout.analysisRun : undefined;
  const run = mine ?? startAnalysis(now);
  const step = await advanceAnalysis(run, gate, {
    now,
    vars: { rollout: rollout.id, policy: rollout.policy },
    ...(deps.measure ? { measure: deps.measure } : {}),
  });
  const { verdict } = step;
  const text = `${verdict.status}: ${verdict.reason}`;
  const measured: RolloutPatch = { analysisRun: step.run, analysisWave: wave, analysisVerdict: text };
  if (step.measured.length > 0 || !mine || text !== rollout.analysisVerdict) {
    draft.set(measured);
    for (const m of step.measured)
      deps.logger.info(
        { rollout: rollout.id, wave: wave + 1, query: m.query.name, outcome: m.measurement.outcome },
        `analysis: ${m.measurement.detail}`,
      );
  }
  const where = `wave ${wave + 1}'s analysis`;
  const facts = { wave: wave + 1, verdict: verdict.status, queries: verdict.queries };
  if (verdict.status === 'running') return 'running';
  if (verdict.status === 'passed') {
    if (step.measured.length > 0) {
      const written = await deps.rollouts.write(
        rollout,
        {
          patch: measured,
          news: [
            {
              type: 'analysis.passed',
              source: 'scheduler',
              ...facts,
              reason: `${where} passed: ${verdict.reason}`,
            },
          ],
        },
        now,
      );
      if (written) draft.took(written.rollout);
    }
    return 'passed';
  }
  const failed = verdict.status === 'failed';
  const reason = `${where} ${failed ? 'failed' : 'was inconclusive'}: ${verdict.reason}`;
  const phase = failed ? 'halted' : 'paused';
  const moved = await draft.move(deps.rollouts, failed ? 'halt' : 'pause', now, {
    reason,
    patch: measured,
    news: [
      { type: failed ? 'analysis.failed' : 'analysis.inconclusive', source: 'gate', ...facts, reason, phase },
    ],
  });
  if (moved) deps.logger.warn({ rollout: rollout.id, wave: wave + 1, verdict: verdict.status }, reason);
  return 'stopped';
}
