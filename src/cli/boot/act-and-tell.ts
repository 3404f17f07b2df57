/**
 * What the operator commands that change a rollout (pause, resume, abort, promote, retry,
 * rollback, forget) do once their flags are checked: open the state, act, and print the
 * result's one line.
 */
import type { ControlDeps, ControlResult } from '../../rollout/index.js';
import type { StateAccess } from './open-state.js';
import { withControl } from './with-control.js';

export async function actAndTell(
  flags: { config?: string },
  act: (deps: ControlDeps & { state: StateAccess }) => Promise<ControlResult>,
): Promise<void> {
  const result = await withControl(flags, act);
  process.stdout.write(`${result.message}\n`);
}
