/**
 * The one-offs (`fleet-upgrade upgrade`, one-off/one-off-policies.ts) that have no rollout yet,
 * as `status` and `/status` show them: the daemon has not started them, and why when it looked
 * and could not (`notStarted`: the build is not offered; when it looks again, or that it gave up).
 * Read from the one-offs' records as stored, without their policy's validation: a view, not a
 * policy.
 */

/** Why the daemon could not start a one-off (yet), and when it looks again. */
export interface OneOffWait {
  /** One sentence: `the service does not offer build 19.999-9 (it offers ...)`. */
  reason: string;
  /** Clock ms of the first look that could not start it. */
  since: number;
  /** Looks that could not start it so far. */
  looks: number;
  /** Clock ms of the next look (none once it gave up). */
  nextLookAt?: number;
  /** Clock ms at which the daemon gave up: it never starts by itself; `abort` or `forget` removes it. */
  gaveUpAt?: number;
}

export interface OneOffView {
  /** Its policy's name (`upgrade-<time>-<random>`). */
  name: string;
  /** The rollout id it will have (`<name>@<build>`; `@latest` until it resolved). */
  id: string;
  /** `latest` or a build. */
  target: string;
  /** The Collector ids it names. */
  collectors: number;
  /** Its organization, when it names one. */
  org?: string;
  createdBy?: string;
  createdAt?: number;
  notStarted?: OneOffWait;
}

/** The one-offs without a rollout, oldest first, from the one-offs' and the policies' hashes. */
export function unstartedOneOffs(raw: Record<string, string>, current: Record<string, string>): OneOffView[] {
  const out: OneOffView[] = [];
  for (const [name, json] of Object.entries(raw)) {
    if (current[name] !== undefined) continue;
    let record: {
      policy?: { target?: unknown; select?: { ids?: unknown }; orgs?: unknown };
      createdBy?: unknown;
      createdAt?: unknown;
      notStarted?: OneOffWait;
    };
    try {
      record = JSON.parse(json);
    } catch {
      continue;
    }
    const target = typeof record.policy?.target === 'string' ? record.policy.target : 'latest';
    const ids = record.policy?.select?.ids;
    const orgs = record.policy?.orgs;
    out.push({
      name,
      id: `${name}@${target}`,
      target,
      collectors: Array.isArray(ids) ? ids.length : 0,
      ...(Array.isArray(orgs) && typeof orgs[0] === 'string' ? { org: orgs[0] } : {}),
      ...(typeof record.createdBy === 'string' ? { createdBy: record.createdBy } : {}),
      ...(typeof record.createdAt === 'number' ? { createdAt: record.createdAt } : {}),
      ...(record.notStarted ? { notStarted: record.notStarted } : {}),
    });
  }
  return out.sort((a, b) => (a.createdAt ?? 0) - (b.createdAt ?? 0));
}
