/**
 * zod schemas of every body the Collector Upgrade Service sends (interface sections 2 and 7,
 * shapes from api-facts.md). Each schema shares its name with its (output) type. The documented
 * variants are tolerated and normalised: `to`/`toVersion`, `requestedTime`/`requestTime`, and a
 * task id as a string or a number (always a string here: it is opaque). Unknown extra fields are
 * ignored; a missing or mistyped field is a protocol error that names it. Vendor text kept
 * with a value (a task's message) is clipped (untrusted-text.ts); a task id has a bounded length.
 */
import { z } from 'zod';
import { clipText, TEXT_LIMITS } from './untrusted-text.js';

/** Real task ids are longs (19 digits at most); a longer one is not an id but a hostile body. */
const MAX_TASK_ID_LENGTH = 64;

const taskIdText = z.union([
  z
    .string()
    .regex(/^\S+$/, 'must be a non-empty id')
    .max(MAX_TASK_ID_LENGTH, `must be an id of at most ${MAX_TASK_ID_LENGTH} characters`),
  z.number().int().nonnegative(),
]);

export const CollectorLink = z.object({ rel: z.string(), href: z.string() });
export type CollectorLink = z.infer<typeof CollectorLink>;

/** An upgradable Collector (section 2.1). The fields the orchestrator decides on are required. */
export const Collector = z.object({
  id: z.number().int(),
  name: z.string(),
  collectorType: z.string(),
  collectorVersion: z.string(),
  alive: z.boolean(),
  hostName: z.string().optional(),
  timeZone: z.string().optional(),
  links: z.array(CollectorLink).optional(),
  ephemeral: z.boolean().optional(),
  sourceSyncMode: z.string().optional(),
  osVersion: z.string().optional(),
  osName: z.string().optional(),
  osArch: z.string().optional(),
  lastSeenAlive: z.number().int().optional(),
});
export type Collector = z.infer<typeof Collector>;

export const CollectorsPage = z.object({ collectors: z.array(Collector) });
export type CollectorsPage = z.infer<typeof CollectorsPage>;

/**
 * A Collector of the inventory (`GET collectors`, the Collector Management API): the fields of
 * section 2.1 plus `category`, `description` and `fields`, of which the inventory keeps what a
 * selection and a count need. `collectorVersion` may be absent or empty (a Hosted Collector's is
 * `""`; a Collector that never connected may have none): its build is then unknown, which is an
 * answer, not a protocol error.
 */
export const InventoryCollector = z.object({
  id: z.number().int(),
  collectorType: z.string(),
  alive: z.boolean(),
  collectorVersion: z.string().nullish(),
  name: z.string().optional(),
  hostName: z.string().optional(),
  timeZone: z.string().optional(),
  ephemeral: z.boolean().optional(),
  osName: z.string().optional(),
  osArch: z.string().optional(),
  lastSeenAlive: z.number().int().optional(),
});
export type InventoryCollector = z.infer<typeof InventoryCollector>;

export const InventoryPage = z.object({ collectors: z.array(InventoryCollector) });
export type InventoryPage = z.infer<typeof InventoryPage>;

export const BuildTarget = z.object({ version: z.string().min(1), latest: z.boolean() });
export type BuildTarget = z.infer<typeof BuildTarget>;

export const Targets = z.object({ targets: z.array(BuildTarget) });
export type Targets = z.infer<typeof Targets>;

/** Task creation result (section 2.4): `{"id":"12345","link":{"rel":"self","href":"/v1/..."}}`. */
export const CreatedTask = z
  .object({
    id: taskIdText,
    link: z.object({ rel: z.string().optional(), href: z.string() }).optional(),
  })
  .transform((t) => ({ id: String(t.id), href: t.link?.href }));
export type CreatedTask = z.output<typeof CreatedTask>;

/** Task status codes (section 3) and the names the orchestrator switches on. */
export const TASK_STATES = {
  0: 'not_started',
  1: 'pending',
  2: 'succeeded',
  3: 'failed',
  6: 'progressing',
} as const;
export type TaskState = (typeof TASK_STATES)[keyof typeof TASK_STATES];

/** The service fails a task not succeeded this long after its request (interface section 8). */
export const SERVICE_TASK_TIMEOUT_MS = 30 * 60_000;

const taskStatusCode = z
  .number()
  .int()
  .refine((n) => n in TASK_STATES, { message: 'unknown task status (expected 0, 1, 2, 3 or 6)' });

/** An upgrade task (section 2.3), normalised: `toVersion`, `requestTime`, `state`, string `id`. */
export const UpgradeTask = z
  .object({
    id: taskIdText,
    collectorId: z.number().int(),
    toVersion: z.string().optional(),
    to: z.string().optional(),
    requestTime: z.number().int().optional(),
    requestedTime: z.number().int().optional(),
    status: taskStatusCode,
    message: z.string().optional(),
  })
  .superRefine((t, ctx) => {
    if (t.toVersion === undefined && t.to === undefined)
      ctx.addIssue({ code: 'custom', path: ['toVersion'], message: 'missing (neither toVersion nor to)' });
    if (t.requestTime === undefined && t.requestedTime === undefined)
      ctx.addIssue({
        code: 'custom',
        path: ['requestTime'],
        message: 'missing (neither requestTime nor requestedTime)',
      });
  })
  .transform((t) => ({
    id: String(t.id),
    collectorId: t.collectorId,
    toVersion: (t.toVersion ?? t.to) as string,
    requestTime: (t.requestTime ?? t.requestedTime) as number,
    status: t.status as keyof typeof TASK_STATES,
    state: TASK_STATES[t.status as keyof typeof TASK_STATES] as TaskState,
    // The reason of a failure reaches logs, Redis and webhooks: one bounded line (untrusted text).
    message: clipText(t.message ?? '', TEXT_LIMITS.taskMessage),
  }));
export type UpgradeTask = z.output<typeof UpgradeTask>;

export const TaskStatus = z.object({ upgrade: UpgradeTask });
export type TaskStatus = z.output<typeof TaskStatus>;

/** The collector APIs' legacy error body: `{status, id, code, message}`. */
export const LegacyErrorBody = z.object({
  status: z.number().optional(),
  id: z.string().optional(),
  code: z.string().min(1),
  message: z.string().optional(),
});
export type LegacyErrorBody = z.infer<typeof LegacyErrorBody>;

/** The newer error body: `{id, errors: [{code, message, detail?}]}`. */
export const ErrorsBody = z.object({
  id: z.string().optional(),
  errors: z
    .array(
      z.object({ code: z.string().min(1), message: z.string().optional(), detail: z.string().optional() }),
    )
    .min(1),
});
export type ErrorsBody = z.infer<typeof ErrorsBody>;

/** Formats the first few zod issues as `field.path: reason`, for protocol errors. */
export function describeIssues(error: z.ZodError, limit = 3): string {
  const parts = error.issues.slice(0, limit).map((issue) => {
    const path = issue.path
      .map((p, i) => (typeof p === 'number' ? `[${p}]` : i === 0 ? String(p) : `.${String(p)}`))
      .join('');
    return path ? `${path}: ${issue.message}` : issue.message;
  });
  const more = error.issues.length > limit ? ` (and ${error.issues.length - limit} more)` : '';
  return parts.join('; ') + more;
}
