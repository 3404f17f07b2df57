/** Exit codes that scripts can rely on (documented in docs/operations.md). */
export const EXIT = {
  ok: 0,
  /** A runtime failure: the service, Redis or the network failed in a way we could not recover from. */
  failure: 1,
  /**
   * `run --once`: the rollout converged, but some Collectors ended other than succeeded;
   * `upgrade`: the one-off was written, but some named Collectors are left out.
   */
  incomplete: 2,
  /**
   * An operator command that does not apply to the rollout's phase (e.g. resume a running
   * rollout); `upgrade` that writes nothing: none of the named Collectors is left to upgrade.
   */
  conflict: 3,
  /** Bad command line (unknown option, missing argument, unknown rollout). */
  usage: 64,
  /** The person may not: refused by the control API's access rules (401, 403; docs/access.md). */
  denied: 77,
  /** A configuration, policy or fleet file is invalid. */
  config: 78,
} as const;

/*
 * `run` and `worker` stopped by a signal (stop-on-signal.ts): 0 when the stop was clean, 1 when a
 * step failed or the stop outlasted its 10 s (Redis away). 128 + the signal's number (SIGHUP 129,
 * SIGINT 130, SIGTERM 143) when a second signal cut the stop short, and for `run --once`
 * interrupted before its rollouts finished.
 */
