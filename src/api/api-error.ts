/**
 * The client's one error model. Every failure has a stable `kind` (and a `FLEET_ERR_API_*`
 * code); the vendor's own code is kept verbatim in `vendorCode`. The five codes of task creation
 * are not errors at all: they are values of `CreateTaskResult` (see collector-upgrade-client.ts).
 */
import { FleetError } from '../lib/errors.js';

export const API_ERROR_KINDS = [
  /** 401: missing or wrong access ID / key. */
  'authentication',
  /** 403: the credentials are valid but may not do this. */
  'permission',
  /** 404: no such resource (an unknown task id, a wrong base path). */
  'not_found',
  /** 400/405/415/other 4xx that are our request's fault, e.g. an unknown `toVersion` when listing. */
  'invalid_request',
  /** 429 after every retry. */
  'rate_limited',
  /** 5xx after every retry. */
  'server',
  /** Connection refused, reset or dropped, DNS failure, after every retry. */
  'network',
  /** No answer within the request timeout, after every retry. */
  'timeout',
  /** The service answered something that does not match the interface (schema, HTML, empty body, redirect loop). */
  'protocol',
] as const;
export type ApiErrorKind = (typeof API_ERROR_KINDS)[number];

/**
 * The operations, as named in logs and metrics: the four of the upgrade interface, and the
 * Collector Management API's list of every Collector (`GET collectors`, the inventory), and the
 * Health Events API's two reads (`health`).
 */
export type ApiEndpoint = 'list' | 'targets' | 'create' | 'status' | 'inventory' | 'health';

/** Error codes of task creation (interface section 7), verbatim. */
export const VENDOR_CREATE_CODES = [
  'collector.invalid',
  'collector.type.invalid',
  'collector.not.alive',
  'collector.in.upgrading',
  'collector.version.invalid',
] as const;
export type VendorCreateCode = (typeof VENDOR_CREATE_CODES)[number];

export function isVendorCreateCode(code: string | undefined): code is VendorCreateCode {
  return code !== undefined && (VENDOR_CREATE_CODES as readonly string[]).includes(code);
}

export interface ApiErrorDetails {
  endpoint: ApiEndpoint;
  /** HTTP status, when the service answered. */
  status?: number;
  /** The vendor's error code, verbatim (`unauthorized`, `rate.limit.exceeded`, ...). */
  vendorCode?: string;
  /** The vendor's request id (`BOKTB-T8R2I-HESK0`), to quote to support. */
  requestId?: string;
  /** HTTP attempts made, retries included. */
  attempts?: number;
  /** How many of them the service answered 429. */
  rateLimitedCount?: number;
  /**
   * Nothing was sent: this deployment's own request budget failed (its Redis unavailable, or no
   * slot within maxWaitMs). Retried like a 429, but it says nothing of the service.
   */
  local?: boolean;
  cause?: unknown;
}

export class ApiError extends FleetError {
  readonly kind: ApiErrorKind;
  readonly endpoint: ApiEndpoint;
  readonly status: number | undefined;
  readonly vendorCode: string | undefined;
  readonly requestId: string | undefined;
  readonly attempts: number;
  readonly rateLimitedCount: number;
  readonly local: boolean;

  constructor(kind: ApiErrorKind, message: string, details: ApiErrorDetails) {
    super(`FLEET_ERR_API_${kind.toUpperCase()}`, message, { cause: details.cause });
    this.name = 'ApiError';
    this.kind = kind;
    this.endpoint = details.endpoint;
    this.status = details.status;
    this.vendorCode = details.vendorCode;
    this.requestId = details.requestId;
    this.attempts = details.attempts ?? 1;
    this.rateLimitedCount = details.rateLimitedCount ?? 0;
    this.local = details.local ?? false;
  }

  /** The same error, after `attempts` attempts in all. */
  withAttempts(attempts: number): ApiError {
    const copy = new ApiError(this.kind, this.message, {
      endpoint: this.endpoint,
      status: this.status,
      vendorCode: this.vendorCode,
      requestId: this.requestId,
      attempts,
      rateLimitedCount: this.rateLimitedCount,
      local: this.local,
      cause: this.cause,
    });
    copy.stack = this.stack;
    return copy;
  }
}
