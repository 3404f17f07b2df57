/**
 * What the operator commands that change a rollout (pause, resume, abort, promote, approve,
 * retry, rollback, forget) do once their flags are checked:
 *
 * - with `--server URL` (or `FLEET_UPGRADE_SERVER`): ask the daemon's HTTP API as the person
 *   whose token is in `FLEET_UPGRADE_TOKEN` / `FLEET_UPGRADE_TOKEN_FILE` (server-client.ts); its
 *   refusals keep the exit codes of the same refusals on Redis;
 * - else: open the state, act as `local:<user>@<host>` with the action's audit record in the
 *   action's own step (a refusal recorded too), confirm the writes on a replica (WAIT, where the
 *   primary has replicas: with-control.ts).
 *
 * Then print the result's one line. When no replica acknowledged them in time, a second line on
 * stderr says that a failover now could undo the action (it is done on the primary; the exit code
 * stays that of the action).
 */
import { hostname } from 'node:os';
import { type AuditLog, type ControlDeps, ControlError, type ControlResult } from '../../rollout/index.js';
import type { StateAccess } from './open-state.js';
import { callServer, serverOf } from './server-client.js';
import { operatorName, type ReplicaCheck, withControl } from './with-control.js';

/** The action as the HTTP API names it: `POST /rollouts/{id}/{action}` with `body`. */
export interface RemoteAction {
  action: string;
  id: string;
  body?: Record<string, unknown>;
  /** The organizations it concerns, when the command names one (`--org`). */
  orgs?: string[];
}

/**
 * Runs an action on Redis as `local:<user>@<host>` with its audit record: in the action's own
 * step when it writes a rollout, alone after it otherwise; a refusal recorded as refused.
 */
export async function auditedLocally<D extends ControlDeps & { audit: AuditLog }, T>(
  deps: D,
  ask: Pick<RemoteAction, 'action' | 'id' | 'orgs'>,
  act: (deps: D) => Promise<T>,
): Promise<T> {
  const note = deps.audit.note({
    who: operatorName(),
    via: 'local',
    from: hostname(),
    what: ask.action,
    rollout: ask.id,
    ...(ask.orgs ? { orgs: ask.orgs } : {}),
    answer: 'allowed',
  });
  try {
    const done = await act({ ...deps, rollouts: deps.rollouts.audited(note) });
    if (!note.written) await deps.audit.append(note.record);
    return done;
  } catch (err) {
    if (err instanceof ControlError && !note.written)
      await deps.audit.append({ ...note.record, answer: 'refused', reason: err.message });
    throw err;
  }
}

export async function actAndTell(
  flags: { config?: string; server?: string },
  act: (deps: ControlDeps & { state: StateAccess }) => Promise<ControlResult>,
  remote: RemoteAction,
): Promise<void> {
  const server = serverOf(flags, process.env);
  if (server) {
    const path = `/rollouts/${encodeURIComponent(remote.id)}/${remote.action}`;
    const result = (await callServer(server, 'POST', path, remote.body ?? {})) as ControlResult;
    process.stdout.write(`${result.message}\n`);
    return;
  }
  let check: ReplicaCheck;
  const result = await withControl(flags, (deps) => auditedLocally(deps, remote, act), {
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
