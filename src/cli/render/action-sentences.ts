/**
 * What each control action does, in the words of its command's help (`fleet-upgrade pause
 * --help`), and the web console's confirmation of it: one text for both, so that the console says
 * exactly what the CLI says (src/console/confirm-action.tsx). Pure: bundled into the console too.
 */

/** Each action's command description. */
export const ACTION_SENTENCES = {
  pause:
    'Pause a rollout: no Collector is admitted (first attempts and retries); tasks under way are followed to their end. `resume` lets it go on.',
  resume:
    'Resume a halted or paused rollout (the failure gate then judges only later outcomes), or release the policy of an aborted one; says what it released.',
  abort:
    'Abort a rollout: nothing more starts in it, ever (Collectors not yet started end `aborted`); tasks under way are followed to their end. Its policy starts no newer build until the policy file changes or `resume ROLLOUT` releases it.',
  promote: 'End the current bake or approval wait of a rollout: its next wave starts now.',
  approve:
    'Approve the wave a rollout waits for: once as many distinct people as its policy asks (approval: { approvers: N }) have approved, it opens. Each person approves once.',
  retry:
    'Give the Collectors of a rollout that ended in the named outcomes one new attempt each (through the same admission: waves, windows, slots). Counted as an attempt of the same Collector, never a new one.',
  rollback:
    'Take Collectors of a rollout back to the build each had before it (recorded when the rollout found it), ' +
    'as rollouts of their own with one task each (same budget, slots, verification, gate and report). ' +
    'A previous build the service no longer offers is reported, not guessed. ' +
    '`status` then says what became of them: rolled back, already on their previous build, not alive, failed, under way.',
  forget:
    "Remove a converged, aborted, superseded or orphaned (policy removed) rollout's data: records, counts, history; its metric series disappear at the next scrape. " +
    'Refused while a rollback request of it waits for the daemon, or while its policy is enabled and still selects its build (the daemon would start it again); ' +
    'its quarantined cohorts stay held if it starts again.',
} as const;

export type ActionWithSentence = keyof typeof ACTION_SENTENCES;

/** The `--org` option's help of the actions that take one. */
export const ORG_SENTENCES = {
  pause: "only this organization's part: nothing new starts there; the others go on",
  resume: "only this organization's part, paused by `pause --org`",
  retry: "only this organization's Collectors",
  rollback: "only this organization's Collectors",
} as const;

export interface Confirmation {
  /** The command that does the same, e.g. `fleet-upgrade pause fleet@19.470-4 --org emea`. */
  command: string;
  /** Its description, then, with `org`, its `--org` option's help. */
  sentences: string[];
}

/** What `action` on rollout `id` will do, as its command's help says it. */
export function confirmationOf(
  action: ActionWithSentence,
  id: string,
  options: { org?: string; only?: readonly string[] } = {},
): Confirmation {
  const { org, only } = options;
  const orgSentence = org
    ? (ORG_SENTENCES as Partial<Record<ActionWithSentence, string>>)[action]
    : undefined;
  return {
    command: `fleet-upgrade ${action} ${id}${only ? ` --only ${only.join(',')}` : ''}${org ? ` --org ${org}` : ''}`,
    sentences: [ACTION_SENTENCES[action], ...(orgSentence ? [`--org ${org}: ${orgSentence}`] : [])],
  };
}
