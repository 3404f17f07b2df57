/**
 * What a person whose `orgs` are limited reads (docs/access.md): the rollouts that hold some of
 * their organizations' Collectors, each with only those organizations' parts (counts, progress,
 * in-flight summed over them; the others' parts, pauses, problems and one-offs withheld:
 * cli/render/focus-org.ts, as `status --org` shows one organization); a report of their
 * Collectors only; a history without the events of another organization's part (`detail.org`);
 * the audit records that name one of their organizations; the inventory of theirs. A rollout that
 * holds none of theirs is a 403 that says so. Without `access:`, or with a grant over every
 * organization, the scope is undefined: everything.
 */
import { scopeRollout, scopeToOrgs } from '../cli/render/focus-org.js';
import {
  DEFAULT_ORG,
  type FleetStatus,
  orgsOf,
  type RecordedEvent,
  type RolloutRecord,
  type RolloutStatus,
} from '../rollout/index.js';
import { echo, HttpError } from './http-error.js';

/** The organizations the caller may read; undefined: all of them. */
export type ReadScope = readonly string[] | undefined;

/** Whether a Collector of `org` (absent: the default one) is the caller's to read. */
export function isReadable(org: string | undefined, scope: ReadScope): boolean {
  return scope === undefined || scope.includes(org ?? DEFAULT_ORG);
}

export function outOfScope(id: string, scope: readonly string[]): HttpError {
  return new HttpError(
    'forbidden',
    `rollout '${echo(id)}' has no Collectors in ${scope.join(', ') || 'no organization'}, the organizations this person may read`,
  );
}

/** Throws the 403 of a rollout that covers none of the caller's organizations. */
export function requireReadable(record: RolloutRecord, scope: ReadScope): void {
  if (scope && !orgsOf(record).some((o) => scope.includes(o))) throw outOfScope(record.id, scope);
}

/** A rollout's status with only the caller's parts; undefined when it holds none of their Collectors. */
export function scopeOne<R extends RolloutStatus>(status: R, scope: ReadScope): R | undefined {
  return scope ? scopeRollout(status, new Set(scope)) : status;
}

export function scopeFleetStatus<S extends Pick<FleetStatus, 'rollouts' | 'orgProblems'>>(
  status: S,
  scope: ReadScope,
): S {
  return scope ? scopeToOrgs(status, scope) : status;
}

/** The history without the events of another organization's part. */
export function scopeEvents(events: RecordedEvent[], scope: ReadScope): RecordedEvent[] {
  if (!scope) return events;
  return events.filter((e) => {
    const org = e.detail?.org;
    return typeof org !== 'string' || scope.includes(org);
  });
}

/** A rollout's record (a report's head) without the other organizations' pauses and rollbacks. */
export function scopeRecord<R extends RolloutRecord>(record: R, scope: ReadScope): R {
  if (!scope || (!record.pausedOrgs && !record.rollbacks)) return record;
  const { pausedOrgs, rollbacks, ...rest } = record;
  const kept = pausedOrgs?.filter((p) => scope.includes(p.org));
  const mine = rollbacks?.filter((e) => isReadable(e.org, scope));
  return {
    ...rest,
    ...(kept?.length ? { pausedOrgs: kept } : {}),
    ...(mine?.length ? { rollbacks: mine } : {}),
  } as R;
}
