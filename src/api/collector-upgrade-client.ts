/**
 * The client of the Collector Upgrade Service: its four operations, each answer parsed with zod.
 * Expected outcomes are values: a create answers `created`, one of the five vendor codes
 * verbatim, or `ambiguous` (the request may or may not have been carried out: reconcile, a later
 * `collector.in.upgrading` means it took); a status read answers `found` or `not_found`.
 * Everything else is an `ApiError` with a stable kind. HTTP policy lives in api-caller.ts.
 */
import type { z } from 'zod';
import { type Clock, systemClock } from '../lib/clock.js';
import { createLogger, type Logger } from '../lib/logger.js';
import { type ApiCaller, type CallSpec, createApiCaller } from './api-caller.js';
import { type ApiEndpoint, ApiError, isVendorCreateCode, type VendorCreateCode } from './api-error.js';
import type { ApiHooks, ApiOutcome } from './api-hooks.js';
import { errorInfoOf } from './classify-response.js';
import { HealthEventsPage } from './health-event.js';
import { createUndiciTransport, type HttpTransport } from './http-transport.js';
import { createMemoryRequestBudget } from './memory-request-budget.js';
import { answerError, parseAnswerBody } from './read-answer.js';
import type { ApiConfig } from './read-api-config.js';
import type { RequestBudget } from './request-budget.js';
import { DEFAULT_RETRY, type RetryOptions } from './retry-policy.js';
import {
  type BuildTarget,
  type Collector,
  CollectorsPage,
  CreatedTask,
  type InventoryCollector,
  InventoryPage,
  Targets,
  TaskStatus,
  type UpgradeTask,
} from './schema.js';
import {
  DEFAULT_PAGE_SIZE,
  PageFill,
  type WalkCollectorPagesParams,
  walkCollectorPages,
} from './walk-collector-pages.js';
import {
  INVENTORY_PAGE_SIZE,
  type InventoryFilter,
  type WalkInventoryParams,
  walkInventoryPages,
} from './walk-inventory-pages.js';

export type CreateTaskResult =
  | { kind: 'created'; taskId: string; href: string | undefined; attempts: number }
  | { kind: VendorCreateCode; message: string; requestId: string | undefined; attempts: number }
  | { kind: 'ambiguous'; reason: 'network' | 'timeout'; message: string; attempts: number };

export type TaskStatusResult =
  | { kind: 'found'; task: UpgradeTask }
  | { kind: 'not_found'; message: string; requestId: string | undefined };

export interface ListCollectorsParams {
  /** Build to upgrade or downgrade to (default: the service's, which the two descriptions disagree on). */
  toVersion?: string;
  offset?: number;
  /** Always sent (default 100): the service's own default differs between its descriptions. */
  limit?: number;
  signal?: AbortSignal;
}

export type CollectorPagesParams = Omit<ListCollectorsParams, 'offset'> & {
  /** Pages read at most (default 20 000, DEFAULT_MAX_PAGES). */
  maxPages?: number;
  /** Distinct Collectors listed at most (default 1 000 000, DEFAULT_MAX_COLLECTORS). */
  maxCollectors?: number;
  /** How many Collectors listed earlier have left the listing since (walk-collector-pages.ts). */
  left?: WalkCollectorPagesParams['left'];
};

export interface ListInventoryParams {
  /** `installed`, `hosted`, `dead` or `alive`; absent: every Collector. */
  filter?: InventoryFilter;
  offset?: number;
  /** Always sent (default 1000, the vendor's documented largest). */
  limit?: number;
  signal?: AbortSignal;
}

export interface HealthEventsParams {
  /** Events per page asked for (default 1000; the service may give fewer). */
  limit?: number;
  /** The continuation token of the previous page. */
  token?: string;
  signal?: AbortSignal;
}

/** A resource whose health events are asked for: its hexadecimal id (lib/hex-id.ts), name, type. */
export interface HealthResource {
  id: string;
  name: string;
  type: 'Collector' | 'Source';
}

/** Events per health page asked for: the fewer requests, the better. */
export const HEALTH_PAGE_SIZE = 1000;

export interface CollectorUpgradeClientOptions {
  config: ApiConfig;
  /** Shared request budget (createRedisRequestBudget); default: an in-memory one with the vendor's limits. */
  budget?: RequestBudget;
  /** Service time, for backoff and Retry-After (default the system clock). */
  clock?: Clock;
  logger?: Logger;
  hooks?: ApiHooks;
  retry?: Partial<RetryOptions>;
  /** Real ms for one HTTP exchange (default 30 000). */
  timeoutMs?: number;
  transport?: HttpTransport;
  /** Jitter source (default Math.random). */
  random?: () => number;
}

export interface CollectorUpgradeClient {
  listCollectors(params?: ListCollectorsParams): Promise<Collector[]>;
  /**
   * Every upgradable Collector, page by page, until an empty page (a short page may be a server
   * cap). Two pages in a row that list only Collectors this walk already listed mean that the
   * service ignores `offset`: a protocol error. Also a protocol error: more than `maxPages`
   * pages (default 20 000) or `maxCollectors` distinct ids (default 1 000 000).
   */
  collectorPages(params?: CollectorPagesParams): AsyncGenerator<Collector[]>;
  listTargets(signal?: AbortSignal): Promise<BuildTarget[]>;
  /** One page of the inventory (`GET collectors`): every Collector of the organization, not only the upgradable. */
  listInventory(params?: ListInventoryParams): Promise<InventoryCollector[]>;
  /**
   * The inventory page by page (walk-inventory-pages.ts), each Collector once, until a page
   * shorter than `limit`. The next page is asked for only when the caller asks for it: a caller
   * paces the walk by the time it takes between two.
   */
  inventoryPages(params?: WalkInventoryParams): AsyncGenerator<InventoryCollector[]>;
  /**
   * `beforeSend` runs before each attempt is sent, once the API budget allows it (the worker
   * records `creating` there); when it rejects, nothing is sent and the call rejects with it.
   */
  createTask(
    input: { collectorId: number; toVersion?: string },
    signal?: AbortSignal,
    beforeSend?: () => Promise<void>,
  ): Promise<CreateTaskResult>;
  getTask(taskId: string | number, signal?: AbortSignal): Promise<TaskStatusResult>;
  /**
   * One page of the account's unresolved health events (`GET healthEvents`), or of the named
   * `resources` only (`POST healthEvents/resources`); `next` is null on the last page. Sent
   * from the budget's least urgent share (REQUEST_PRIORITY.health).
   */
  healthEvents(
    params?: HealthEventsParams & { resources?: readonly HealthResource[] },
  ): Promise<HealthEventsPage>;
  /** The base URL in use (after a deployment redirect, the one it pointed to). */
  baseUrl(): string;
  close(): Promise<void>;
}

export { DEFAULT_PAGE_SIZE };

export function createCollectorUpgradeClient(options: CollectorUpgradeClientOptions): CollectorUpgradeClient {
  const { config } = options;
  const logger = (options.logger ?? createLogger({ level: 'silent' })).child({ component: 'api' });
  const hooks = options.hooks ?? {};
  const clock = options.clock ?? systemClock;
  const transport = options.transport ?? createUndiciTransport();
  const budget = options.budget ?? createMemoryRequestBudget();
  // What the service's pages taught this client: a later walk ends at a page shorter than one seen.
  const pageFill = new PageFill();
  const caller: ApiCaller = createApiCaller({
    baseUrl: config.baseUrl.replace(/\/+$/, ''),
    authorization: `Basic ${Buffer.from(`${config.accessId}:${config.accessKey}`).toString('base64')}`,
    transport,
    budget,
    clock,
    logger,
    hooks,
    retry: { ...DEFAULT_RETRY, ...options.retry },
    timeoutMs: options.timeoutMs ?? 30_000,
    userAgent: 'fleet-upgrade (collector upgrade client)',
    random: options.random ?? Math.random,
  });

  /** Runs one operation and reports it to `onOperation`, whatever its end. */
  async function operation<T>(
    endpoint: ApiEndpoint,
    run: () => Promise<{ value: T; outcome: ApiOutcome; attempts: number; rateLimitedCount: number }>,
  ): Promise<T> {
    const t0 = performance.now();
    const report = (outcome: ApiOutcome, attempts: number, rateLimitedCount: number) => {
      try {
        hooks.onOperation?.({
          endpoint,
          outcome,
          attempts,
          retries: Math.max(0, attempts - 1),
          rateLimitedCount,
          durationMs: performance.now() - t0,
        });
      } catch (err) {
        logger.warn({ err: (err as Error).message }, 'api metrics hook failed');
      }
    };
    try {
      const r = await run();
      report(r.outcome, r.attempts, r.rateLimitedCount);
      return r.value;
    } catch (err) {
      if (err instanceof ApiError) report(err.kind, err.attempts, err.rateLimitedCount);
      throw err;
    }
  }

  /** Sends a GET and parses its 200 body. */
  async function get<S extends z.ZodType>(spec: CallSpec, schema: S) {
    const r = await caller.call(spec);
    if (r.type !== 'answer') throw r.error; // only creates are ambiguous
    if (r.answer.status !== 200) throw answerError(spec, r.answer, r.attempts);
    const value: z.output<S> = parseAnswerBody(spec, r.answer, schema);
    return { value, outcome: 'ok' as const, attempts: r.attempts, rateLimitedCount: r.rateLimitedCount };
  }

  const listCollectors = (params: ListCollectorsParams = {}) =>
    operation('list', async () => {
      const spec: CallSpec = {
        endpoint: 'list',
        method: 'GET',
        path: 'collectors/upgrades/collectors',
        query: {
          toVersion: params.toVersion,
          offset: params.offset ?? 0,
          limit: params.limit ?? DEFAULT_PAGE_SIZE,
        },
        idempotent: true,
        signal: params.signal,
      };
      const r = await get(spec, CollectorsPage);
      return { ...r, value: r.value.collectors };
    });

  const listInventory = (params: ListInventoryParams = {}) =>
    operation('inventory', async () => {
      const spec: CallSpec = {
        endpoint: 'inventory',
        method: 'GET',
        path: 'collectors',
        query: {
          filter: params.filter,
          offset: params.offset ?? 0,
          limit: params.limit ?? INVENTORY_PAGE_SIZE,
        },
        idempotent: true,
        signal: params.signal,
      };
      const r = await get(spec, InventoryPage);
      return { ...r, value: r.value.collectors };
    });

  return {
    listCollectors,
    collectorPages: (params = {}) => walkCollectorPages(listCollectors, params, pageFill),
    listInventory,
    inventoryPages: (params = {}) => walkInventoryPages(listInventory, params),
    listTargets: (signal) =>
      operation('targets', async () => {
        const spec: CallSpec = {
          endpoint: 'targets',
          method: 'GET',
          path: 'collectors/upgrades/targets',
          idempotent: true,
          signal,
        };
        const r = await get(spec, Targets);
        return { ...r, value: r.value.targets };
      }),
    createTask: (input, signal, beforeSend) =>
      operation<CreateTaskResult>('create', async () => {
        const body = input.toVersion === undefined ? { collectorId: input.collectorId } : { ...input };
        const spec: CallSpec = {
          endpoint: 'create',
          method: 'POST',
          path: 'collectors/upgrades',
          body,
          idempotent: false,
          signal,
          beforeSend,
        };
        const r = await caller.call(spec);
        const base = { attempts: r.attempts, rateLimitedCount: r.rateLimitedCount };
        if (r.type === 'ambiguous') {
          const reason = r.error.kind === 'timeout' ? 'timeout' : 'network';
          const value: CreateTaskResult = {
            kind: 'ambiguous',
            reason,
            message: r.error.message,
            attempts: r.attempts,
          };
          return { ...base, value, outcome: 'ambiguous' };
        }
        const { answer } = r;
        if (answer.status >= 200 && answer.status < 300) {
          const created = parseAnswerBody(spec, answer, CreatedTask);
          const value: CreateTaskResult = {
            kind: 'created',
            taskId: created.id,
            href: created.href,
            attempts: r.attempts,
          };
          return { ...base, value, outcome: 'ok' };
        }
        const info = errorInfoOf(answer);
        if (answer.status === 400 && isVendorCreateCode(info.vendorCode)) {
          const value: CreateTaskResult = {
            kind: info.vendorCode,
            message: info.message ?? '',
            requestId: info.requestId,
            attempts: r.attempts,
          };
          return { ...base, value, outcome: info.vendorCode };
        }
        throw answerError(spec, answer, r.attempts);
      }),
    getTask: (taskId, signal) =>
      operation<TaskStatusResult>('status', async () => {
        const path = `collectors/upgrades/${encodeURIComponent(String(taskId))}`;
        const spec: CallSpec = { endpoint: 'status', method: 'GET', path, idempotent: true, signal };
        const r = await caller.call(spec);
        if (r.type !== 'answer') throw r.error;
        const base = { attempts: r.attempts, rateLimitedCount: r.rateLimitedCount };
        if (r.answer.status === 404) {
          const info = errorInfoOf(r.answer);
          const value: TaskStatusResult = {
            kind: 'not_found',
            message: info.message ?? '',
            requestId: info.requestId,
          };
          return { ...base, value, outcome: 'not_found' };
        }
        if (r.answer.status !== 200) throw answerError(spec, r.answer, r.attempts);
        const value: TaskStatusResult = {
          kind: 'found',
          task: parseAnswerBody(spec, r.answer, TaskStatus).upgrade,
        };
        return { ...base, value, outcome: 'ok' };
      }),
    healthEvents: (params = {}) =>
      operation('health', async () => {
        const query = { limit: params.limit ?? HEALTH_PAGE_SIZE, token: params.token };
        const spec: CallSpec = params.resources
          ? {
              endpoint: 'health',
              method: 'POST',
              path: 'healthEvents/resources',
              query,
              body: { data: params.resources },
              // A read: sending it twice changes nothing.
              idempotent: true,
              signal: params.signal,
            }
          : {
              endpoint: 'health',
              method: 'GET',
              path: 'healthEvents',
              query,
              idempotent: true,
              signal: params.signal,
            };
        const r = await caller.call(spec);
        if (r.type !== 'answer') throw r.error;
        if (r.answer.status !== 200) throw answerError(spec, r.answer, r.attempts);
        const value = parseAnswerBody(spec, r.answer, HealthEventsPage);
        return { value, outcome: 'ok' as const, attempts: r.attempts, rateLimitedCount: r.rateLimitedCount };
      }),
    baseUrl: () => caller.baseUrl(),
    async close() {
      if (!options.transport) await transport.close();
      if (!options.budget) await budget.close();
    },
  };
}
