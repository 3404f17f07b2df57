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
import type { AnalysisGate } from '../../policy/analysis.js';
import type { RolloutRecord } from '../life/rollout-store.js';
import type { AdvanceDeps } from '../tick/advance-rollout.js';

export type WaveAnalysisResult = 'running' | 'passed' | 'stopped';

export async function analyseWave(
  deps: Pick<AdvanceDeps, 'rollouts' | 'emit' | 'logger'> & { measure?: MeasureQuery },
  rollout: RolloutRecord,
  gate: AnalysisGate,
  now: number,
): Promise<WaveAnalysisResult> {
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
  if (step.measured.length > 0 || !mine || text !== rollout.analysisVerdict) {
    await deps.rollouts.setFields(rollout.id, {
      analysisRun: JSON.stringify(step.run),
      analysisWave: wave,
      analysisVerdict: text,
    });
    rollout.analysisRun = step.run;
    rollout.analysisWave = wave;
    rollout.analysisVerdict = text;
    for (const m of step.measured)
      deps.logger.info(
        { rollout: rollout.id, wave: wave + 1, query: m.query.name, outcome: m.measurement.outcome },
        `analysis: ${m.measurement.detail}`,
      );
  }
  const where = `wave ${wave + 1}'s analysis`;
  const detail = { wave: wave + 1, verdict: verdict.status, queries: verdict.queries };
  if (verdict.status === 'running') return 'running';
  if (verdict.status === 'passed') {
    if (step.measured.length > 0)
      await deps.emit(
        rollout,
        'analysis.passed',
        'scheduler',
        `${rollout.id}: ${where} passed: ${verdict.reason}`,
        detail,
      );
    return 'passed';
  }
  const event = verdict.status === 'failed' ? 'halt' : 'pause';
  const reason = `${where} ${verdict.status === 'failed' ? 'failed' : 'was inconclusive'}: ${verdict.reason}`;
  const moved = await deps.rollouts.move(rollout, event, now, reason);
  if (!moved) return 'stopped';
  rollout.phase = moved;
  deps.logger.warn({ rollout: rollout.id, wave: wave + 1, verdict: verdict.status }, reason);
  await deps.emit(
    rollout,
    verdict.status === 'failed' ? 'analysis.failed' : 'analysis.inconclusive',
    'gate',
    `${rollout.id} ${moved}: ${reason}. \`fleet-upgrade resume ${rollout.id}\` analyses again; \`promote\` then \`resume\` skips the analysis; \`abort\` ends the rollout`,
    detail,
  );
  return 'stopped';
}
