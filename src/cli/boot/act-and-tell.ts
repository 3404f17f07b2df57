/**
 * What the operator commands that change a rollout (pause, resume, abort, promote, retry,
 * rollback, forget) do once their flags are checked: open the state, act, confirm the writes on
 * a replica (WAIT, where the primary has replicas: with-control.ts), and print the result's one
 * line. When no replica acknowledged them in time, a second line on stderr says that a failover
 * now could undo the action (it is done on the primary; the exit code stays that of the action).
 */
import type { ControlDeps, ControlResult } from '../../rollout/index.js';
import type { StateAccess } from './open-state.js';
import { type ReplicaCheck, withControl } from './with-control.js';

export async function actAndTell(
  flags: { config?: string },
  act: (deps: ControlDeps & { state: StateAccess }) => Promise<ControlResult>,
): Promise<void> {
  let check: ReplicaCheck;
  const result = await withControl(flags, act, {
    onReplicas: (c) => {
      check = c;
    },
  });
  process.stdout.write(`${result.message}\n`);
  if (check && !check.ok)
    process.stderr.write(
      `warning: written on the primary, but not yet on a replica (${check.reason}): a failover now could undo it; look at \`status\` after one\n`,
    );
}
