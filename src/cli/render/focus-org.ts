/**
 * `status --org NAME`: the fleet's status seen from one organization. The rollouts that cover it
 * and hold some of its Collectors (or wait on its service), each with that organization's part
 * only: its counts, progress and in-flight stand for the rollout's (the table, `--json`'s
 * `total`), and of its organizations' parts only that one; and that organization's problem, if it
 * has one. A rollout whose Collectors are all in other organizations is left out. An organization
 * that neither the settings nor any rollout names is a usage error that names the known ones.
 *
 * `scopeToOrgs` is the same for several organizations: what a person whose `orgs` are limited
 * reads through the daemon (docs/access.md): a rollout that spans others shows only their parts
 * (counts, progress and in-flight summed over them; the others' parts, pauses and problems
 * withheld), one-offs of other organizations are left out, and its rollbacks are those of their
 * organizations, each account over those alone.
 */
import { FleetError } from '../../lib/errors.js';
import { type FleetStatus, type RolloutStatus, scopeRollbacks } from '../../rollout/index.js';

type Scoped = Pick<FleetStatus, 'rollouts' | 'orgProblems'> & Partial<Pick<FleetStatus, 'oneOffs'>>;

export function focusOrg<S extends Scoped>(status: S, org: string, settingsOrgs: readonly string[]): S {
  const known = [...new Set([...settingsOrgs, ...status.rollouts.flatMap((r) => r.byOrg.map((p) => p.org))])];
  if (!known.includes(org))
    throw new FleetError('FLEET_ERR_USAGE', `--org: no organization '${org}' (known: ${known.join(', ')})`);
  return scopeToOrgs(status, [org]);
}

export function scopeToOrgs<S extends Scoped>(status: S, orgs: readonly string[]): S {
  const within = new Set(orgs);
  // The rollback rollouts as the whole status has them (an account is recounted from them).
  const byId = new Map(status.rollouts.map((r) => [r.id, r]));
  const find = (id: string) => byId.get(id);
  return {
    ...status,
    rollouts: status.rollouts.flatMap((r) => {
      const scoped = scopeRollout(r, within);
      if (!scoped) return [];
      if (scoped === r || !r.rollbacks?.length) return [scoped];
      const { rollbacks, rollbackAccounts, ...rest } = scoped;
      return [{ ...rest, ...scopeRollbacks({ rollbacks, rollbackAccounts }, within, find) } as RolloutStatus];
    }),
    orgProblems: status.orgProblems.filter((p) => within.has(p.org)),
    ...(status.oneOffs
      ? { oneOffs: status.oneOffs.filter((o) => o.org === undefined || within.has(o.org)) }
      : {}),
  };
}

/** A rollout with only the parts of `within`; undefined when it holds none of their Collectors. */
export function scopeRollout<R extends RolloutStatus>(r: R, within: ReadonlySet<string>): R | undefined {
  // Covered, but none of its Collectors are there (another organization's canary): not its.
  const parts = r.byOrg.filter(
    (p) => within.has(p.org) && !(p.total === 0 && p.waiting === undefined && r.total > 0),
  );
  if (parts.length === 0) return undefined;
  if (parts.length === r.byOrg.length) return r;
  const counts: Record<string, number> = {};
  for (const p of parts)
    for (const [state, n] of Object.entries(p.counts)) counts[state] = (counts[state] ?? 0) + (n ?? 0);
  const sum = (k: 'inflight' | 'total' | 'done') => parts.reduce((a, p) => a + p[k], 0);
  const { pausedOrgs, ...rest } = r;
  const paused = pausedOrgs?.filter((p) => within.has(p.org));
  return {
    ...rest,
    counts: counts as R['counts'],
    inflight: sum('inflight'),
    total: sum('total'),
    done: sum('done'),
    byOrg: parts,
    ...(paused?.length ? { pausedOrgs: paused } : {}),
  } as R;
}
