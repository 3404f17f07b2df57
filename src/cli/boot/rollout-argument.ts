/**
 * What the commands that act on a rollout say the same way: the help of the argument that names
 * it, and the scope of `--org NAME` (an organization the rollout covers: the action checks that,
 * and refuses another naming the rollout's organizations, exit 64).
 */
export const ROLLOUT_ARGUMENT = 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)';

/** An action scoped by `--org` as the HTTP API takes it (act-and-tell.ts `RemoteAction`). */
export function remoteOf(action: string, id: string, flags: { org?: string }) {
  return {
    action,
    id,
    body: orgScope(flags),
    ...(flags.org === undefined ? {} : { orgs: [flags.org] }),
  };
}

/** `{ org }` when `--org` was given, else `{}` (the whole rollout). */
export function orgScope(flags: { org?: string }): { org?: string } {
  return flags.org === undefined ? {} : { org: flags.org };
}
