/**
 * Clients of the Collector Upgrade Service for integration tests: no request budget unless the
 * test gives one, backoff on an instant clock (recorded, never slept), hooks and log lines
 * captured. Every client made here is closed by `closeTestClients()` (call it in afterEach).
 */
import type { ApiAttemptEvent, ApiOperationEvent } from '../../src/api/api-hooks.js';
import {
  type CollectorUpgradeClient,
  type CollectorUpgradeClientOptions,
  createCollectorUpgradeClient,
} from '../../src/api/collector-upgrade-client.js';
import { createMemoryRequestBudget } from '../../src/api/memory-request-budget.js';
import { type CapturedLogger, captureLogger } from './capture-logger.js';
import { createInstantClock, type InstantClock } from './instant-clock.js';
import { OPS } from './simulator.js';

export interface TestClient {
  client: CollectorUpgradeClient;
  clock: InstantClock;
  log: CapturedLogger;
  attempts: ApiAttemptEvent[];
  operations: ApiOperationEvent[];
}

const open = new Set<CollectorUpgradeClient>();

export function createTestClient(
  baseUrl: string,
  options: Partial<Omit<CollectorUpgradeClientOptions, 'config'>> & {
    accessId?: string;
    accessKey?: string;
  } = {},
): TestClient {
  const { accessId, accessKey, ...rest } = options;
  const clock = createInstantClock();
  const log = captureLogger('debug');
  const attempts: ApiAttemptEvent[] = [];
  const operations: ApiOperationEvent[] = [];
  const client = createCollectorUpgradeClient({
    config: { baseUrl, accessId: accessId ?? OPS.accessId, accessKey: accessKey ?? OPS.accessKey },
    clock,
    logger: log.logger,
    budget: createMemoryRequestBudget({ perSecond: 0, concurrent: 0 }),
    hooks: { onAttempt: (e) => attempts.push(e), onOperation: (e) => operations.push(e) },
    retry: { maxAttempts: 4, baseDelayMs: 100, maxDelayMs: 2000, maxTotalMs: 60_000 },
    timeoutMs: 5000,
    ...rest,
  });
  open.add(client);
  return { client, clock, log, attempts, operations };
}

export async function closeTestClients(): Promise<void> {
  const all = [...open];
  open.clear();
  await Promise.all(all.map((c) => c.close()));
}
