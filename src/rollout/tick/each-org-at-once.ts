/**
 * Work on each organization of a round at once (each goes through its own API budget), waiting
 * for all of them: one that fails does not cut the others short, and the first failure is thrown
 * once every one has ended (an organization's own problem is handled inside `work`).
 */
export async function eachOrgAtOnce<T>(parts: readonly T[], work: (part: T) => Promise<void>): Promise<void> {
  const results = await Promise.allSettled(parts.map(work));
  const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failed) throw failed.reason;
}
