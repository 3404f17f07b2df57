/**
 * Why a simulated task fails, and how likely it is to fail: the failure ratio of a Collector's
 * task (a bad build for one cohort replaces the global ratio) and the cause of a failure with its
 * message. The messages are fixed strings, one family per cause, so that a client can classify
 * them by pattern; docs/simulator.md "Fleet file" lists them.
 */
import type { Random } from '../lib/random.js';
import type { Behaviour, FailureCause } from './schema.js';

/**
 * Messages by cause. The first of each is the message the simulator has always drawn; a
 * Collector with a cause always gets the same one of its cause's messages (by its id).
 */
export const FAILURE_MESSAGES: Readonly<Record<FailureCause, readonly string[]>> = {
  disk_space: [
    'Upgrade failed: not enough disk space on the host to unpack the new build.',
    'Upgrade failed: not enough disk space in the installation directory (212 MB free, 650 MB needed).',
  ],
  upgrades_disabled: [
    'Upgrade refused: remote upgrades are disabled on this Collector (disableUpgrade=true).',
    'Upgrade refused: remote upgrades are disabled in user.properties (disableUpgrade=true).',
  ],
  permission: [
    "Upgrade failed: permission denied while replacing files in the Collector's installation directory.",
    'Upgrade failed: permission denied: the Collector service account may not write to its installation directory.',
  ],
  network: [
    'Upgrade failed: could not download the installer (connection reset by peer).',
    'Upgrade failed: could not download the installer: connection timed out.',
  ],
  unknown: [
    'Upgrade failed: the new build did not start; the Collector rolled back to the previous version.',
    'Upgrade failed: the installer exited with code 1.',
  ],
};

/** Without `behaviour.failureCauses`: the draw the simulator has always made (equal chances, first messages). */
const LEGACY_CAUSES: readonly FailureCause[] = [
  'disk_space',
  'permission',
  'network',
  'upgrades_disabled',
  'unknown',
];

function lookup(table: Readonly<Record<string, number>> | undefined, key: string): number | undefined {
  return table && Object.hasOwn(table, key) ? table[key] : undefined;
}

/**
 * The failure ratio of a task to `toVersion` on this Collector: the largest of the
 * `failureRatioBy` entries that match its osName and osArch (when the task's build is one of
 * `failureRatioBy.builds`, or that list is unset), else `failureRatio`.
 */
export function failureRatioFor(
  behaviour: Behaviour,
  c: { osName: string; osArch: string },
  toVersion: string,
): number {
  const by = behaviour.failureRatioBy;
  if (!by || (by.builds && !by.builds.includes(toVersion))) return behaviour.failureRatio;
  const matches = [lookup(by.osName, c.osName), lookup(by.osArch, c.osArch)].filter(
    (r): r is number => r !== undefined,
  );
  return matches.length > 0 ? Math.max(...matches) : behaviour.failureRatio;
}

export interface Failure {
  /** null when the Collector's own `failureMessage` was used without a `failureCause`. */
  cause: FailureCause | null;
  message: string;
}

/**
 * The cause and message of a failed task. An explicit `failureMessage` wins (no draw); then the
 * Collector's `failureCause`; then a draw by `behaviour.failureCauses` weights, or the legacy
 * draw when those are unset. One draw from `rng` at most, as before causes existed.
 */
export function drawFailure(
  behaviour: Behaviour,
  c: { id: number; failureMessage?: string; failureCause?: FailureCause },
  rng: Random,
): Failure {
  if (c.failureMessage !== undefined) return { cause: c.failureCause ?? null, message: c.failureMessage };
  if (c.failureCause) return { cause: c.failureCause, message: messageOf(c.failureCause, c.id) };
  const weights = behaviour.failureCauses;
  if (!weights) {
    const cause = rng.pick(LEGACY_CAUSES);
    return { cause, message: FAILURE_MESSAGES[cause][0] as string };
  }
  const cause = rng.weighted(
    LEGACY_CAUSES.map((k) => [k, weights[k] ?? 0] as const).filter(([, w]) => w > 0),
  );
  return { cause, message: messageOf(cause, c.id) };
}

function messageOf(cause: FailureCause, collectorId: number): string {
  const list = FAILURE_MESSAGES[cause];
  return list[collectorId % list.length] as string;
}
