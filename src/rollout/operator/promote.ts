/**
 * `promote`: ends the current wave's bake, analysis or approval wait (one person's approval
 * only), or with `--full` runs every remaining wave at once. A compare-and-set on the wave.
 */
import { promoted } from '../admit/index.js';

import { act, type ControlDeps, type ControlResult, conflict, load } from './control.js';

/** Ends the current bake, analysis or approval wait; `full`: every remaining wave at once. */
export async function promote(
  deps: ControlDeps,
  id: string,
  actor: string,
  full: boolean,
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  // A wave's analysis that stopped the rollout may be skipped before the rollout is resumed.
  const stoppedByAnalysis =
    (rollout.phase === 'halted' || rollout.phase === 'paused') && rollout.wave.waitingFor === 'analysis';
  if (rollout.phase !== 'running' && rollout.phase !== 'converged' && !stoppedByAnalysis)
    throw conflict(rollout, 'only a running rollout can be promoted (resume it first)');
  const progress = rollout.wave;
  // Approvals by several people are not one person's to skip (operator/approve.ts).
  if (progress.waitingFor === 'approval' && progress.approval && progress.approval.approvers > 1)
    throw conflict(
      rollout,
      `wave ${progress.index + 2} awaits ${progress.approval.approvers} approvals: \`fleet-upgrade approve ${id}\` (each by another person)`,
    );
  const of = progress.of ?? progress.index + 1;
  const next = promoted(progress, of, full);
  if (!next)
    throw conflict(
      rollout,
      rollout.phase === 'converged'
        ? `nothing waits to be promoted: ${of === 1 ? 'its one wave has' : `all ${of} waves have`} run`
        : `nothing waits: wave ${progress.index + 1} of ${of} is under way`,
    );
  return act(
    deps,
    rollout,
    {
      waveSeq: progress.seq,
      wave: { ...next, of },
      news: [
        {
          type: 'rollout.promoted',
          source: 'operator',
          actor,
          full,
          wave: next.index + 1,
          of,
          ended: progress.waitingFor ?? null,
          afterResume: stoppedByAnalysis,
        },
      ],
    },
    () => conflict(rollout, 'its waves moved meanwhile; look again'),
  );
}
