/**
 * A client of the Collector Upgrade Service over a scripted transport: each request takes the
 * next step of the script (an answer, or a thrown TransportError), backoff runs on an instant
 * clock, hooks and log lines are captured. For unit tests of the HTTP policy without sockets.
 */
import type { ApiAttemptEvent, ApiOperationEvent } from '../../../src/api/api-hooks.js';
import {
  type CollectorUpgradeClientOptions,
  createCollectorUpgradeClient,
} from '../../../src/api/collector-upgrade-client.js';
import type { HttpAnswer, HttpRequest } from '../../../src/api/http-transport.js';
import { createMemoryRequestBudget } from '../../../src/api/memory-request-budget.js';
import { captureLogger } from '../../support/capture-logger.js';
import { createInstantClock } from '../../support/instant-clock.js';

export type Step = (req: HttpRequest) => HttpAnswer;

export const SECRET = 'k3y-secret-value';
export const BASIC = `Basic ${Buffer.from(`suABC:${SECRET}`).toString('base64')}`;

export const json = (status: number, body: unknown, headers: Record<string, string> = {}): HttpAnswer => ({
  status,
  headers: { 'content-type': 'application/json', ...headers },
  contentType: 'application/json',
  text: JSON.stringify(body),
});

export const targets = json(200, { targets: [{ version: '19.470-4', latest: true }] });

export function scriptedClient(
  steps: Step[] | ((req: HttpRequest, n: number) => HttpAnswer),
  over: Partial<Omit<CollectorUpgradeClientOptions, 'config' | 'transport'>> & { baseUrl?: string } = {},
) {
  const { baseUrl, ...rest } = over;
  const requests: HttpRequest[] = [];
  const attempts: ApiAttemptEvent[] = [];
  const operations: ApiOperationEvent[] = [];
  const clock = createInstantClock();
  const log = captureLogger('debug');
  const next = (req: HttpRequest): HttpAnswer => {
    if (typeof steps === 'function') return steps(req, requests.length);
    const step = steps.shift();
    if (!step) throw new Error(`unexpected request ${req.method} ${req.url}`);
    return step(req);
  };
  const client = createCollectorUpgradeClient({
    config: { baseUrl: baseUrl ?? 'https://api.sumologic.com/api/v1', accessId: 'suABC', accessKey: SECRET },
    clock,
    logger: log.logger,
    budget: createMemoryRequestBudget({ perSecond: 0, concurrent: 0 }),
    hooks: { onAttempt: (e) => attempts.push(e), onOperation: (e) => operations.push(e) },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 1000, maxTotalMs: 60_000 },
    random: () => 0.5,
    ...rest,
    transport: {
      send: async (req) => {
        requests.push(req);
        return next(req);
      },
      close: async () => {},
    },
  });
  return { client, requests, attempts, operations, clock, log };
}
