/**
 * `resume`: a halted or paused rollout goes on, an organization's pause ends, or the policy of an
 * aborted rollout is released. One compare-and-set with its event.
 */
import { isPolicyPause } from '../life/index.js';

import { act, type ControlDeps, type ControlResult, checkOrg, conflict, load, result } from './control.js';

/**
 * Lets a halted or paused rollout go on (the gate then judges only later outcomes), or releases
 * the policy of an aborted one (a newer build may start a rollout; this one stays aborted), once.
 * Says what it released. Each is one compare-and-set with its event: of several at once, one
 * answers and the others are refused.
 */
export async function resume(
  deps: ControlDeps,
  id: string,
  actor: string,
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const now = deps.clock.now();
  const { org } = scope;
  checkOrg(rollout, org);
  if (org !== undefined) {
    const paused = rollout.pausedOrgs ?? [];
    if (!paused.some((p) => p.org === org)) throw conflict(rollout, `org ${org} is not paused`);
    return act(
      deps,
      rollout,
      {
        phase: rollout.phase,
        patch: { pausedOrgs: paused.filter((p) => p.org !== org) },
        news: [{ type: 'rollout.resumed', source: 'operator', actor, released: 'org', org }],
      },
      () => conflict(rollout, 'it changed meanwhile; look again'),
    );
  }
  if (rollout.phase === 'aborted') {
    if (rollout.releasedAt !== undefined) throw conflict(rollout, 'its policy was released already');
    return act(
      deps,
      rollout,
      {
        // Not a move (it stays aborted): released once, while it is still aborted.
        phase: 'aborted',
        unless: 'releasedAt',
        patch: { releasedAt: now },
        news: [{ type: 'rollout.resumed', source: 'operator', actor, released: 'abort' }],
      },
      () => conflict(rollout, 'its policy was released already'),
    );
  }
  if (rollout.phase === 'paused' && isPolicyPause(rollout.pauseReason))
    throw conflict(
      rollout,
      `its policy is ${rollout.pauseReason?.replace('policy ', '')}: enable or restore the policy file to go on`,
    );
  if (rollout.phase !== 'halted' && rollout.phase !== 'paused')
    throw conflict(rollout, 'only a halted or paused rollout can be resumed');
  const what =
    rollout.phase === 'halted'
      ? `the failure gate's halt (${rollout.haltReason ?? 'no reason recorded'})`
      : `the pause ${rollout.pauseReason ?? ''}`.trim();
  const counts = await deps.store.counts(id);
  const waves = await deps.store.waveCounts(id);
  const written = await deps.rollouts.resume(rollout, counts, deps.clock.now(), waves, {
    // A wave whose analysis stopped the rollout is analysed afresh (`promote` skips it instead).
    ...(rollout.wave.waitingFor === 'analysis' ? { patch: { analysisRun: null } } : {}),
    news: [{ type: 'rollout.resumed', source: 'operator', actor, released: rollout.phase, what }],
  });
  if (!written) throw conflict((await deps.rollouts.get(id)) ?? rollout, 'it changed meanwhile; look again');
  return result(written);
}
