/**
 * What /readyz of `run` and `worker` checks: Redis answers PING within 1 s, the service accepts
 * the credentials (asked at most once a minute: the check spends API budget), and for `run` the
 * policy files are valid.
 */
import type { ReadinessCheck } from '../../http/start-http-server.js';
import type { Redis } from '../../lib/redis/create-redis.js';
import { pingWithin } from '../../lib/redis/ping-within.js';

export function readinessChecks(
  redis: Redis,
  client: { listTargets(): Promise<unknown> },
  policyProblems?: () => string | undefined,
): ReadinessCheck[] {
  let apiCheck: { at: number; problem: string | undefined } | undefined;
  const checks: ReadinessCheck[] = [
    {
      name: 'redis',
      check: async () =>
        (await pingWithin(redis, 1000)) === undefined ? undefined : 'Redis does not answer PING within 1 s',
    },
    {
      name: 'api',
      // Credentials are checked at most once a minute: the check spends API budget.
      check: async () => {
        if (apiCheck && Date.now() - apiCheck.at < 60_000) return apiCheck.problem;
        let problem: string | undefined;
        try {
          await client.listTargets();
        } catch (err) {
          problem = (err as Error).message;
        }
        apiCheck = { at: Date.now(), problem };
        return problem;
      },
    },
  ];
  if (policyProblems) checks.push({ name: 'policies', check: async () => policyProblems() });
  return checks;
}
