/**
 * `retry`: exactly the Collectors in the states named get one new attempt, through the admitter;
 * retried quarantined Collectors release their cohorts.
 */
import {
  type CollectorRecord,
  type CollectorState,
  type Move,
  orgOf,
  RETRYABLE_STATES,
  transition,
} from '../collector/index.js';
import type { RolloutRecord } from '../life/index.js';

import {
  act,
  type ControlDeps,
  ControlError,
  type ControlResult,
  checkOrg,
  conflict,
  load,
} from './control.js';

export { RETRYABLE_STATES };
export type RetryableState = (typeof RETRYABLE_STATES)[number];

/**
 * Exactly the Collectors in `only` get one new attempt, through the admitter: counted as an
 * attempt of the same Collector (its `retries`), never as a new one.
 */
export async function retry(
  deps: ControlDeps,
  id: string,
  actor: string,
  only: readonly CollectorState[],
  scope: { org?: string } = {},
): Promise<ControlResult> {
  const rollout = await load(deps, id);
  const { org } = scope;
  checkOrg(rollout, org);
  const bad = only.filter((s) => !RETRYABLE_STATES.includes(s));
  if (only.length === 0 || bad.length)
    throw new ControlError(
      'invalid',
      `--only takes ${RETRYABLE_STATES.join(', ')}${bad.length ? `; not ${bad.join(', ')}` : ''}`,
    );
  if (!retryable(rollout.phase)) throw conflict(rollout, 'its Collectors can no longer be retried');
  const now = deps.clock.now();
  const chosen: CollectorRecord[] = [];
  for await (const r of deps.store.all(id))
    if (only.includes(r.state) && (org === undefined || orgOf(r) === org)) chosen.push(r);
  let retried = 0;
  for (let i = 0; i < chosen.length; i += 500) {
    const moves: Move[] = [];
    for (const r of chosen.slice(i, i + 500)) {
      const t = transition(
        r,
        { type: 'operator_retry', message: `retried by ${actor}` },
        { now, settings: rollout.settings },
      );
      if (t.ok) moves.push(t.move);
    }
    retried += (await deps.store.apply(id, moves)).filter((o) => o === 'written').length;
  }
  const released = releasedCohorts(chosen);
  const byState = Object.fromEntries(only.map((s) => [s, chosen.filter((r) => r.state === s).length]));
  return act(
    deps,
    rollout,
    {
      ...(released.length
        ? {
            patch: {
              cohortsReleased: [...new Set([...(rollout.cohortsReleased ?? []), ...released])],
              quarantined: (rollout.quarantined ?? []).filter((q) => !released.includes(q.cohort)),
            },
          }
        : {}),
      news: [
        {
          type: 'rollout.retried',
          source: 'operator',
          actor,
          retried,
          only,
          byState,
          released,
          waits: rollout.phase === 'halted' || rollout.phase === 'paused',
          ...(org === undefined ? {} : { org }),
        },
      ],
    },
    () => conflict(rollout, 'it changed meanwhile; look again'),
  );
}

/**
 * Retrying quarantined Collectors releases their cohorts: they are not quarantined again in this
 * rollout (the failure gate still judges their outcomes). The cohorts released.
 */
function releasedCohorts(chosen: readonly CollectorRecord[]): string[] {
  return [
    ...new Set(chosen.filter((r) => r.state === 'quarantined' && r.cohort).map((r) => r.cohort as string)),
  ];
}

/**
 * Phases in which `retry` works (and `status` may suggest it): not once the rollout is aborted or
 * superseded, whose Collectors no attempt of it reaches any more.
 */
export function retryable(phase: RolloutRecord['phase']): boolean {
  return phase !== 'aborted' && phase !== 'superseded';
}
