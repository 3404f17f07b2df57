/** The client of the Collector Upgrade Service: what the orchestrator may import. */
export type { ApiCaller, CallSpec } from './api-caller.js';
export {
  API_ERROR_KINDS,
  type ApiEndpoint,
  ApiError,
  type ApiErrorKind,
  isVendorCreateCode,
  VENDOR_CREATE_CODES,
  type VendorCreateCode,
} from './api-error.js';
export type { ApiAttemptEvent, ApiHooks, ApiOperationEvent, ApiOutcome } from './api-hooks.js';
export {
  type CollectorPagesParams,
  type CollectorUpgradeClient,
  type CollectorUpgradeClientOptions,
  type CreateTaskResult,
  createCollectorUpgradeClient,
  DEFAULT_PAGE_SIZE,
  HEALTH_PAGE_SIZE,
  type HealthEventsParams,
  type HealthResource,
  type ListCollectorsParams,
  type ListInventoryParams,
  type TaskStatusResult,
} from './collector-upgrade-client.js';
export type { HealthEvent, HealthEventsPage } from './health-event.js';
export {
  createUndiciTransport,
  type HttpTransport,
  MAX_ANSWER_BYTES,
  TransportError,
} from './http-transport.js';
export { createMemoryRequestBudget, type MemoryRequestBudgetOptions } from './memory-request-budget.js';
export {
  type ApiConfig,
  baseUrlForDeployment,
  DEPLOYMENTS,
  type Deployment,
  normaliseBaseUrl,
  readApiConfig,
} from './read-api-config.js';
export { createRedisRequestBudget, type RedisRequestBudgetOptions } from './redis-request-budget.js';
export {
  type BudgetLease,
  type BudgetLimits,
  DEFAULT_BUDGET_LIMITS,
  type RequestBudget,
} from './request-budget.js';
export { DEFAULT_RETRY, MAX_RETRY_AFTER_MS, type RetryOptions } from './retry-policy.js';
export {
  type BuildTarget,
  type Collector,
  type InventoryCollector,
  SERVICE_TASK_TIMEOUT_MS,
  TASK_STATES,
  type TaskState,
  type UpgradeTask,
} from './schema.js';
export { DEFAULT_MAX_COLLECTORS, DEFAULT_MAX_PAGES } from './walk-collector-pages.js';
export {
  INVENTORY_PAGE_SIZE,
  type InventoryFilter,
  type WalkInventoryParams,
} from './walk-inventory-pages.js';
