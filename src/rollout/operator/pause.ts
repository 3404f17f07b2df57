/**
 * `pause`: holds every admission of a rollout (first attempts and retries; tasks under way
 * finish), or with `--org` that organization's part alone. A compare-and-set with its event.
 */
import { act, type ControlDeps, type ControlResult, checkOrg, conflict, load } from './control.js';

/**
 * Holds every admission of the rollout, first attempts and retries; tasks under way finish.
 * With `org`, only that organization's part is held (the others go on).
 */
export async function pause(
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
    if (rollout.phase !== 'running' && rollout.phase !== 'converged')
      throw conflict(rollout, 'only a running or converged rollout can be paused');
    if (rollout.pausedOrgs?.some((p) => p.org === org))
      throw conflict(rollout, `org ${org} is paused already`);
    return act(
      deps,
      rollout,
      {
        phase: rollout.phase,
        patch: { pausedOrgs: [...(rollout.pausedOrgs ?? []), { org, by: actor, at: now }] },
        news: [{ type: 'rollout.paused', source: 'operator', actor, reason: `by ${actor}`, org }],
      },
      () => conflict(rollout, 'it changed meanwhile; look again'),
    );
  }
  return act(
    deps,
    rollout,
    {
      move: { event: 'pause', reason: `by ${actor}` },
      patch: { pausedBy: actor, pausedAt: now },
      news: [{ type: 'rollout.paused', source: 'operator', actor, reason: `by ${actor}` }],
    },
    () => conflict(rollout, 'only a running or converged rollout can be paused'),
  );
}
