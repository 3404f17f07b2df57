/**
 * Turns a policy's `waves` into the rollout's plan for `total` selected Collectors: one cap per
 * wave. Wave sizes are cumulative: `[10, "10%", "100%"]` lets the rollout admit at most 10
 * Collectors, then at most 10% of them, then all. A percentage rounds up (a wave is never empty),
 * a cap never goes down, and the last cap is always `total`: a list that stops short of 100% gets
 * a final wave of everything, so a rollout always converges. A wave that would admit nobody new is
 * dropped (its bake and approval go to the wave before it), so the rollout never waits on an empty
 * wave. A first wave that selects its members (canaries) without a size is as large as the
 * `canaries` found.
 */
import type { AnalysisGate } from './analysis.js';
import type { Wave, WaveApproval } from './wave.js';

export interface PlannedWave {
  /** Collectors admitted (first attempts) once this wave is open, cumulative. */
  cap: number;
  /** Wait after the wave's last outcome before the next wave, clock ms. */
  bakeMs?: number;
  /** The next wave waits for `promote`, or for approvals by several people. */
  approval?: WaveApproval;
  /** Queries that must hold (after the bake) before the next wave. */
  analysis?: AnalysisGate;
}

export function wavePlan(
  waves: readonly Wave[],
  total: number,
  canaries = 0,
  /** The policy's `analysis`, for waves without their own. */
  analysis?: AnalysisGate,
): PlannedWave[] {
  if (!Number.isInteger(total) || total < 0)
    throw new RangeError(`total must be a whole number >= 0, got ${total}`);
  const plan: PlannedWave[] = [];
  let previous = 0;
  for (const wave of waves) {
    const size = wave.size
      ? wave.size.kind === 'count'
        ? wave.size.count
        : Math.ceil((total * wave.size.percent) / 100)
      : canaries;
    const cap = Math.min(total, Math.max(previous, size));
    // A canary wave whose selection matched nobody: nothing to wait for after it.
    if (!wave.size && cap === 0 && plan.length === 0) continue;
    const last = plan[plan.length - 1];
    if (last && cap === previous) {
      // Empty: what follows it follows the wave before.
      if (wave.bakeMs !== undefined) last.bakeMs = Math.max(last.bakeMs ?? 0, wave.bakeMs);
      if (wave.approval) last.approval = wave.approval;
      if (wave.analysis) last.analysis = wave.analysis;
      continue;
    }
    const gate = wave.analysis ?? analysis;
    plan.push({
      cap,
      ...(wave.bakeMs === undefined ? {} : { bakeMs: wave.bakeMs }),
      ...(wave.approval ? { approval: wave.approval } : {}),
      ...(gate ? { analysis: gate } : {}),
    });
    previous = cap;
  }
  if (plan.length === 0 || previous < total) plan.push({ cap: total });
  // Nothing follows the last wave: no analysis holds it.
  const final = plan[plan.length - 1] as PlannedWave;
  delete final.analysis;
  return plan;
}

/** The caps of the plan's waves. */
export function waveLimits(waves: readonly Wave[], total: number, canaries = 0): number[] {
  return wavePlan(waves, total, canaries).map((w) => w.cap);
}
