/**
 * `POST /plan`: what `fleet-upgrade plan` would do with a policy pasted in the body
 * (`{"policy": "<YAML>"}`), through the daemon's own client of each organization's service:
 * which Collectors would move from which build to which, and those a known issue holds back.
 * Creates nothing, writes nothing to Redis: a read (role viewer), but one that pages through the
 * service, so it goes through the control gate (its rate, its Origin rule). The policy is checked
 * as a policy file is (its errors name the line and the field, `policy.yaml:3:9: ...`), at most
 * MAX_POLICY_BYTES. Unlike the command, it does not weigh `minAge` and `after` (they need the
 * daemon's settings and the builds it saw): it plans toward the build the target names now.
 */
import type { CollectorUpgradeClient } from '../api/index.js';
import { type PlanHeld, type PlanRow, planOrg, targetOf } from '../cli/commands/plan.js';
import { FleetError } from '../lib/errors.js';
import { MAX_POLICY_BYTES, parsePolicyText } from '../policy/load/load-policies.js';
import { policyOrgs } from '../policy/select/select-collectors.js';
import { HttpError } from './http-error.js';

/** The body's limit: the largest policy file, written as a JSON string (escapes included), and a little. */
export const PLAN_BODY_LIMIT_BYTES = 2 * MAX_POLICY_BYTES + 1024;

export interface PlanDeps {
  orgs: readonly string[];
  client(org: string): CollectorUpgradeClient;
}

export interface PlanAnswer {
  policy: string;
  target: string;
  builds: Record<string, string>;
  listed: number;
  collectors: PlanRow[];
  held: PlanHeld[];
  /** Each organization whose service could not answer, and why. */
  failed: string[];
}

export async function planPolicy(deps: PlanDeps, body: unknown): Promise<PlanAnswer> {
  const text = (body as { policy?: unknown } | null)?.policy;
  if (typeof text !== 'string' || text.trim() === '')
    throw new HttpError('invalid', 'policy: expected the text of a policy file (YAML) as a string');
  const parsed = parsePolicyText('policy.yaml', text);
  if (!parsed.ok) throw new HttpError('invalid', parsed.error.message);
  const { policy } = parsed.loaded;
  const orgs = policyOrgs(policy, deps.orgs);
  if (orgs.length === 0)
    throw new HttpError(
      'invalid',
      `policy ${policy.name} covers no organization of the daemon (orgs: ${policy.orgs.join(', ')}; the daemon's: ${deps.orgs.join(', ')})`,
    );
  const answer: PlanAnswer = {
    policy: policy.name,
    target: policy.target,
    builds: {},
    listed: 0,
    collectors: [],
    held: [],
    failed: [],
  };
  for (const org of orgs) {
    try {
      const client = deps.client(org);
      const build = targetOf(policy, await client.listTargets());
      const found = await planOrg(client, policy, org, build);
      answer.builds[org] = build;
      answer.listed += found.listed;
      answer.collectors.push(...found.rows);
      answer.held.push(...found.held);
    } catch (err) {
      // The service's answer (a target not offered, credentials refused): this organization's part.
      if (!(err instanceof FleetError)) throw err;
      answer.failed.push(`org ${org}: ${err.message}`);
    }
  }
  return answer;
}
