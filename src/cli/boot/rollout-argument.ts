/** The help of the argument that names a rollout, the same in every command that takes one. */
export const ROLLOUT_ARGUMENT = 'rollout id, e.g. linux-fleet@19.470-4 (see `status`)';
