/**
 * What the operator commands (pause, resume, abort, promote, retry, forget, history) share: the
 * deployment's state in Redis opened as `status` opens it, the operator's name for the history,
 * and one line printed per result. They need no daemon: the daemon acts on what they write at its
 * next tick.
 */
import { hostname, userInfo } from 'node:os';
import type { Command } from 'commander';
import { type Confirmation, startReplicaWait } from '../../lib/redis/replica-wait.js';
import { AuditLog, type ControlDeps, type EventLog } from '../../rollout/index.js';
import { loadDaemonConfig } from './daemon-config.js';
import { type StateAccess, withState } from './open-state.js';

/** Who acts on Redis directly, as the history and the audit trail record it: `local:<user>@<host>`. */
export function operatorName(): string {
  let user = 'unknown';
  try {
    user = userInfo().username;
  } catch {
    // no passwd entry (a container): keep 'unknown'
  }
  return `local:${user}@${hostname()}`;
}

export function addStateOptions(command: Command): Command {
  return command.option(
    '--config <file>',
    'settings file (default config/fleet-upgrade.yaml when it exists)',
  );
}

/**
 * `--server URL`: act through a daemon's HTTP API as the person whose token is in
 * FLEET_UPGRADE_TOKEN or FLEET_UPGRADE_TOKEN_FILE (server-client.ts), instead of on Redis.
 */
export function addServerOption(command: Command): Command {
  return command.option(
    '--server <url>',
    "act through this daemon's HTTP API as the person of FLEET_UPGRADE_TOKEN or FLEET_UPGRADE_TOKEN_FILE (or FLEET_UPGRADE_SERVER)",
  );
}

/** What became of an action's writes on the replicas (`confirm`); undefined when nothing to wait for. */
export type ReplicaCheck = Confirmation | undefined;

/**
 * Opens the state, runs `work` with the control dependencies, closes it. `confirm`: the work
 * writes, and its writes are then confirmed by WAIT as a create's pre-write is
 * (`redis.minReplicasForCreate`, replica-wait.ts): `onReplicas` is told whether a replica
 * acknowledged them. Without that, an action the command reported done can be undone by a
 * failover right after it (the promoted replica never had it).
 */
export async function withControl<T>(
  flags: { config?: string },
  work: (deps: ControlDeps & { events: EventLog; state: StateAccess; audit: AuditLog }) => Promise<T>,
  confirm?: { onReplicas(check: ReplicaCheck): void },
): Promise<T> {
  const config = loadDaemonConfig({ env: process.env, flags, needApi: false });
  return withState(config, async (state) => {
    const audit = new AuditLog(state.redis, state.keys, config.audit);
    if (!confirm) return work({ ...state, clock: state.clock, state, audit });
    const wait = await startReplicaWait({
      redis: state.redis,
      key: state.keys.clock,
      flagKey: state.keys.replicated,
      topology: config.redis?.kind ?? 'standalone',
      minReplicas: config.minReplicasForCreate,
      ...(config.replicaWaitMs === undefined ? {} : { timeoutMs: config.replicaWaitMs }),
      refreshMs: 0,
    });
    try {
      const mark = wait.mark();
      const result = await work({ ...state, clock: state.clock, state, audit });
      confirm.onReplicas(mark.needed > 0 ? await wait.confirm(mark) : undefined);
      return result;
    } finally {
      wait.close();
    }
  });
}
