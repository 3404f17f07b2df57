/**
 * What /readyz of `run` and `worker` checks: Redis answers PING within 1 s, the service accepts
 * the credentials (asked at most once a minute: the check spends API budget), and for `run` the
 * policy files are valid and every enabled policy's target is offered by the service (the check
 * `targets` names each policy whose target is not: nothing of it starts). With several organizations, each one's service is checked the same
 * way; one with a problem is named (`degraded`: its part waits, the others go on), and only when
 * none answers is the process not ready.
 */
import type { ReadinessCheck } from '../../http/start-http-server.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import { pingWithin } from '../../lib/redis/ping-within.js';
import { DaemonProblems, DEFAULT_ORG, type Keys } from '../../rollout/index.js';

/**
 * The check `targets`: the policies whose target the service does not offer, as the leading
 * scheduler found them (the daemon's problems in Redis, so every `run` process says the same).
 */
export function targetReadiness(redis: Redis, keys: Keys): () => Promise<string | undefined> {
  const problems = new DaemonProblems(redis, keys);
  return async () => {
    // Redis away is the check `redis`'s to say.
    const all = await problems.read().catch(() => []);
    const found = all.filter((p) => p.kind === 'target_not_offered');
    return found.length
      ? found.map((p) => `policy ${p.policy ?? p.subject}: ${p.reason}`).join('; ')
      : undefined;
  };
}

export function readinessChecks(
  redis: Redis,
  clients: ReadonlyMap<string, { listTargets(): Promise<unknown> }>,
  policyProblems?: () => string | undefined,
  targetProblems?: () => Promise<string | undefined>,
): ReadinessCheck[] {
  const apiChecks = new Map<string, { at: number; problem: string | undefined }>();
  // Credentials are checked at most once a minute: the check spends API budget.
  const problemOf = async (org: string, client: { listTargets(): Promise<unknown> }) => {
    const last = apiChecks.get(org);
    if (last && Date.now() - last.at < 60_000) return last.problem;
    let problem: string | undefined;
    try {
      await client.listTargets();
    } catch (err) {
      problem = (err as Error).message;
    }
    apiChecks.set(org, { at: Date.now(), problem });
    return problem;
  };
  const checks: ReadinessCheck[] = [
    {
      name: 'redis',
      check: async () =>
        (await pingWithin(redis, 1000)) === undefined ? undefined : 'Redis does not answer PING within 1 s',
    },
  ];
  const [only] = clients.entries();
  if (clients.size === 1 && only?.[0] === DEFAULT_ORG)
    checks.push({ name: 'api', check: () => problemOf(only[0], only[1]) });
  else if (clients.size > 0) {
    const each = async () =>
      (
        await Promise.all([...clients].map(async ([org, c]) => ({ org, problem: await problemOf(org, c) })))
      ).filter((p) => p.problem !== undefined);
    checks.push(
      {
        name: 'orgs',
        advisory: true,
        check: async () => {
          const sick = await each();
          return sick.length ? sick.map((p) => `org ${p.org}: ${p.problem}`).join('; ') : undefined;
        },
      },
      {
        name: 'api',
        check: async () => ((await each()).length === clients.size ? 'no organization answers' : undefined),
      },
    );
  }
  if (policyProblems) checks.push({ name: 'policies', check: async () => policyProblems() });
  if (targetProblems) checks.push({ name: 'targets', check: targetProblems });
  return checks;
}
