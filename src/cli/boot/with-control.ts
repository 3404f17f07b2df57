/**
 * What the operator commands (pause, resume, abort, promote, retry, forget, history) share: the
 * deployment's state in Redis opened as `status` opens it, the operator's name for the history,
 * and one line printed per result. They need no daemon: the daemon acts on what they write at its
 * next tick.
 */
import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import type { ControlDeps, EventLog } from '../../rollout/index.js';
import { loadDaemonConfig } from './daemon-config.js';
import { type StateAccess, withState } from './open-state.js';

/** Who acts, as the history records it: `user@host`. */
export function operatorName(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container): keep 'unknown'
  }
  return `${user}@${hostname()}`;
}

export function addStateOptions(command: Command): Command {
  return command.option(
    '--config <file>',
    'settings file (default config/fleet-upgrade.yaml when it exists)',
  );
}

/** Opens the state, runs `work` with the control dependencies, closes it. */
export async function withControl<T>(
  flags: { config?: string },
  work: (deps: ControlDeps & { events: EventLog; state: StateAccess }) => Promise<T>,
): Promise<T> {
  const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
  return withState(config, (state) => work({ ...state, clock: state.clock, state }));
}
