/**
 * `POST /plan`: what `fleet-upgrade plan` would do with a policy pasted in the body
 * (`{"policy": "<YAML>"}`), through the daemon's own client of each organization's service:
 * which Collectors would move from which build to which, and those a known issue holds back.
 * Creates nothing, writes nothing to Redis: a read (role viewer), but one that pages through the
 * service, so it goes through the control gate (its rate, its Origin rule). The policy is checked
 * as a policy file is (its errors name the line and the field, `policy.yaml:3:9: ...`), at most
 * MAX_POLICY_BYTES. A policy with `minAge` or `after` is decided as the command decides it
 * (plan-version-rules.ts's decideBuilds), from the daemon's own Redis: the builds it first saw,
 * the policy's current rollout, the ring's rollouts, on the deployment's clock; the answer's
 * `notes` say what those rules decided, in the command's words.
 */
import type { BuildTarget, CollectorUpgradeClient as Client } from '../api/index.js';
import { type PlanHeld, type PlanRow, planOrg, targetOf } from '../cli/commands/plan.js';
import { type BuildState, decideBuilds } from '../cli/commands/plan-version-rules.js';
import { FleetError } from '../lib/errors.js';
import { MAX_POLICY_BYTES, parsePolicyText } from '../policy/load/load-policies.js';
import { policyOrgs } from '../policy/select/select-collectors.js';
import { HttpError } from './http-error.js';

/** The body's limit: the largest policy file, written as a JSON string (escapes included), and a little. */
export const PLAN_BODY_LIMIT_BYTES = 2 * MAX_POLICY_BYTES + 1024;

export interface PlanDeps {
  orgs: readonly string[];
  client(org: string): Client;
  /** The daemon's Redis and clock, to weigh `minAge` and `after` as the scheduler does. */
  state: BuildState;
}

export interface PlanAnswer {
  policy: string;
  target: string;
  /** The builds the moving Collectors go to (`, `-joined), as `plan --json` says it. */
  build: string;
  builds: Record<string, string>;
  listed: number;
  collectors: PlanRow[];
  held: PlanHeld[];
  /** What `minAge` and `after` decided, in sentences (empty without them). */
  notes: string[];
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
    build: '',
    builds: {},
    listed: 0,
    collectors: [],
    held: [],
    notes: [],
    failed: [],
  };
  // The service's answer (a target not offered, credentials refused): this organization's part.
  const orgFailed = (org: string, err: unknown) => {
    if (!(err instanceof FleetError)) throw err;
    answer.failed.push(`org ${org}: ${err.message}`);
  };
  // What the target names in each organization; then what minAge and after let start now.
  const lists = new Map<string, readonly BuildTarget[]>();
  const named: Record<string, string> = {};
  for (const org of orgs) {
    try {
      const targets = await deps.client(org).listTargets();
      named[org] = targetOf(policy, targets);
      lists.set(org, targets);
    } catch (err) {
      orgFailed(org, err);
    }
  }
  const planned = await decideBuilds(deps.state, policy, lists, named);
  answer.notes = planned.notes;
  for (const [org, build] of Object.entries(planned.builds)) {
    try {
      const found = await planOrg(deps.client(org), policy, org, build);
      answer.builds[org] = build;
      answer.listed += found.listed;
      answer.collectors.push(...found.rows);
      answer.held.push(...found.held);
    } catch (err) {
      orgFailed(org, err);
    }
  }
  // As the command: the builds the moving Collectors go to; with none moving, every one named.
  const moving = new Set(answer.collectors.map((r) => r.org));
  answer.build = [
    ...new Set(
      Object.entries(answer.builds)
        .filter(([org]) => moving.size === 0 || moving.has(org))
        .map(([, b]) => b),
    ),
  ].join(', ');
  return answer;
}
