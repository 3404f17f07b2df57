/**
 * What makes an organization wait (orgs/org-health.ts, orgProblemOf): the service's answers, not
 * this deployment's own request budget. A budget that fails (its Redis gone, no slot in time) is
 * retried like a 429, but it was named the organization's "429s" although nothing was sent (found
 * by the chaos test across organizations: a Redis kill during one organization's outage).
 */
import { describe, expect, it } from 'vitest';
import { createApiCaller } from '../../../src/api/api-caller.js';
import { ApiError } from '../../../src/api/api-error.js';
import { DEFAULT_RETRY } from '../../../src/api/retry-policy.js';
import { systemClock } from '../../../src/lib/clock.js';
import { FleetError } from '../../../src/lib/errors.js';
import { createLogger } from '../../../src/lib/logger.js';
import { orgProblemOf } from '../../../src/rollout/orgs/index.js';

describe('orgProblemOf', () => {
  it("does not take this deployment's budget failure for the service's 429s", async () => {
    const caller = createApiCaller({
      baseUrl: 'http://127.0.0.1:9/api/v1',
      authorization: 'Basic x',
      transport: {} as never,
      budget: {
        acquire: async () => {
          throw new FleetError(
            'FLEET_ERR_API_BUDGET',
            'the API request budget in Redis is unavailable: Connection is closed.',
          );
        },
      } as never,
      clock: systemClock,
      logger: createLogger({ level: 'silent' }),
      hooks: {},
      retry: DEFAULT_RETRY,
      timeoutMs: 1000,
      userAgent: 't',
      random: Math.random,
    });
    const err = await caller
      .call({ endpoint: 'targets', method: 'GET', path: 'collectors/upgrades/targets', idempotent: true })
      .then(
        () => undefined,
        (e: unknown) => e,
      );
    // Still retried as a transient failure by its callers...
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).kind).toBe('rate_limited');
    expect((err as ApiError).local).toBe(true);
    // ... but no problem of the organization.
    expect(orgProblemOf(err)).toBeUndefined();
  });

  it("names the service's own 429s after every retry", () => {
    const err = new ApiError('rate_limited', 'GET targets: 429', {
      endpoint: 'targets',
      status: 429,
      attempts: 6,
    });
    expect(orgProblemOf(err)).toMatchObject({ kind: 'rate_limited' });
  });
});
