/**
 * What `abort` and `forget` do to a one-off that never started: they remove it (nothing of it ran).
 */
import { plural } from '../../lib/plural.js';
import { unstartedOneOffs } from '../life/index.js';

import { type ControlDeps, ControlError, type ControlResult } from './control.js';

/**
 * A one-off (`fleet-upgrade upgrade`) that never started, named `NAME` or `NAME@TARGET`: `abort`
 * and `forget` of it remove it (nothing of it ran). Undefined when `id` names no such one-off.
 */
export async function removeUnstartedOneOff(
  deps: ControlDeps,
  id: string,
): Promise<ControlResult | undefined> {
  const at = id.indexOf('@');
  const name = at < 0 ? id : id.slice(0, at);
  const json = await deps.rollouts.oneOffs.unstarted(name);
  if (json === undefined) return undefined;
  const [view] = unstartedOneOffs({ [name]: json }, {});
  if (!view || (at >= 0 && id.slice(at + 1) !== view.target)) return undefined;
  if (!(await deps.rollouts.oneOffs.removeUnstarted(name, json)))
    throw new ControlError(
      'conflict',
      `one-off ${view.id} changed meanwhile (it may have started); look again`,
    );
  const why = view.notStarted
    ? `not started: ${view.notStarted.reason}`
    : 'the daemon had not started it yet';
  return {
    rollout: view.id,
    message: `removed one-off ${view.id} (${plural(view.collectors, 'Collector')}): ${why}; nothing of it ran`,
  };
}
