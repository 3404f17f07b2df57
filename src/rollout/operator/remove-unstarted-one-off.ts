/**
 * What `abort` and `forget` do to a one-off that never started: they remove it (nothing of it ran).
 */
import { setTimeout as delay } from 'node:timers/promises';
import { plural } from '../../lib/plural.js';
import { type OneOffView, unstartedOneOffs } from '../life/index.js';

import { type ControlDeps, ControlError, type ControlResult } from './control.js';

/**
 * Tries at removing a one-off that the daemon rewrites meanwhile (a look that still cannot start
 * it, which counts its looks) before `abort` or `forget` says it changed.
 */
export const REMOVE_ONE_OFF_TRIES = 5;

const changed = (id: string) =>
  new ControlError('conflict', `one-off ${id} changed meanwhile (it may have started); look again`);

/**
 * A one-off (`fleet-upgrade upgrade`) that never started, named `NAME` or `NAME@TARGET`: `abort`
 * and `forget` of it remove it (nothing of it ran). Undefined when `id` names no such one-off. The
 * removal holds only as read: when the daemon rewrote the record meanwhile and it is still not
 * started, it is read again and removed (after a growing wait, REMOVE_ONE_OFF_TRIES at most); when
 * it started meanwhile, a conflict.
 */
export async function removeUnstartedOneOff(
  deps: ControlDeps,
  id: string,
): Promise<ControlResult | undefined> {
  const at = id.indexOf('@');
  const name = at < 0 ? id : id.slice(0, at);
  let view: OneOffView | undefined;
  for (let tries = 0; ; tries++) {
    const json = await deps.rollouts.oneOffs.unstarted(name);
    const read = json === undefined ? undefined : unstartedOneOffs({ [name]: json }, {})[0];
    const named = read !== undefined && (at < 0 || id.slice(at + 1) === read.target);
    // Not (or no longer) an unstarted one-off of that name: the caller's to look up, unless this
    // one was one a moment ago (it started meanwhile).
    if (json === undefined || !named) {
      if (view === undefined) return undefined;
      throw changed(view.id);
    }
    view = read;
    if (await deps.rollouts.oneOffs.removeUnstarted(name, json)) break;
    if (tries + 1 >= REMOVE_ONE_OFF_TRIES) throw changed(view.id);
    // Real ms: the other writer is the daemon, on Redis's time, not the deployment's clock.
    await delay(10 * 2 ** tries);
  }
  const why = view.notStarted
    ? `not started: ${view.notStarted.reason}`
    : 'the daemon had not started it yet';
  return {
    rollout: view.id,
    message: `removed one-off ${view.id} (${plural(view.collectors, 'Collector')}): ${why}; nothing of it ran`,
  };
}
