/**
 * A Collector's key in a rollout. Collector ids are unique within an organization only (two
 * organizations, often two deployments of the service, each number their own), so a rollout that
 * spans organizations keys each of its Collectors by both: the id alone for the `default`
 * organization (so the keys of a deployment without `orgs` are what they always were), and
 * `<org>/<id>` for any other. The key names the Collector's record, its place in the waiting
 * indexes, its in-flight slot and its job.
 */

/** The name of the one organization of a deployment without `orgs`. */
export const DEFAULT_ORG = 'default';

/** `100000001` (default organization) or `emea/100000001`. */
export type CollectorKey = number | `${string}/${number}`;

/** The key of Collector `id` of organization `org`. */
export function collectorKey(org: string | undefined, id: number): CollectorKey {
  return org === undefined || org === DEFAULT_ORG ? id : `${org}/${id}`;
}

/** The key of a record (or anything with an id and maybe an organization). */
export function keyOf(r: { id: number; org?: string | undefined }): CollectorKey {
  return collectorKey(r.org, r.id);
}

/** The organization and id a key names; a stored member (text) is read the same way. */
export function parseCollectorKey(key: CollectorKey | string): { org: string; id: number } {
  if (typeof key === 'number') return { org: DEFAULT_ORG, id: key };
  const slash = key.lastIndexOf('/');
  if (slash < 0) return { org: DEFAULT_ORG, id: Number(key) };
  return { org: key.slice(0, slash), id: Number(key.slice(slash + 1)) };
}

/** A key as stored in Redis (a hash field, an index member). */
export function memberOf(key: CollectorKey): string {
  return String(key);
}

/** The key a stored member stands for (numbers for the default organization, as before). */
export function keyFromMember(member: string): CollectorKey {
  const { org, id } = parseCollectorKey(member);
  return collectorKey(org, id);
}

/** The organization of a record (the default one when it has none: records from before orgs). */
export function orgOf(r: { org?: string | undefined }): string {
  return r.org ?? DEFAULT_ORG;
}
