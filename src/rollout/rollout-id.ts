/** A rollout's id: `<policy>@<build>` (policy names hold no `@`), and the policy it belongs to. */
export function rolloutId(policy: string, build: string): string {
  return `${policy}@${build}`;
}

/** The policy of a rollout id. */
export function policyOf(rolloutId: string): string {
  const at = rolloutId.indexOf('@');
  return at < 0 ? rolloutId : rolloutId.slice(0, at);
}
