/**
 * The JSON bodies of the control endpoints (zod). Strict: an unknown field (`{"ful": true}`) is a
 * 400 that names it, not an action done differently from what was meant.
 */
import { z } from 'zod';
import { isBuildVersion } from '../lib/version.js';
import { LATEST } from '../policy/schema.js';
import { ONE_OFF_MAX_COLLECTORS, RETRYABLE_STATES, ROLLBACK_STATES } from '../rollout/index.js';
import { BODY_LIMIT_BYTES } from './read-json-body.js';

/** forget: nothing to say (an empty body is `{}`). */
export const EmptyBody = z.strictObject({});
export type EmptyBody = z.infer<typeof EmptyBody>;

/**
 * An organization the action is scoped to (`--org`): its name as the settings give it. Whether
 * the rollout covers it is the action's to say (400 naming the rollout's organizations).
 */
const org = z
  .string({ error: 'expected the name of an organization' })
  .min(1, { error: 'write the name of an organization, or leave the field out' })
  .max(64, { error: 'at most 64 characters' })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
  .regex(/^[^\u0000-\u001f\u007f-\u009f\s]*$/, { error: 'white space and control characters are refused' })
  .optional();

/** pause, resume: the whole rollout, or one organization's part (`org`). */
export const ScopeBody = z.strictObject({ org });
export type ScopeBody = z.infer<typeof ScopeBody>;

export const AbortBody = z.strictObject({
  /** Why, for the history and the notifications (default `by http:<address>`). */
  reason: z
    .string()
    .trim()
    .min(1, { error: 'write a reason, or leave the field out' })
    .max(500, { error: 'at most 500 characters' })
    // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what is refused
    .regex(/^[^\u0000-\u001f\u007f-\u009f]*$/, { error: 'control characters are refused' })
    .optional(),
});
export type AbortBody = z.infer<typeof AbortBody>;

export const PromoteBody = z.strictObject({
  /** Every remaining wave at once (`promote --full`). */
  full: z.boolean().optional(),
});
export type PromoteBody = z.infer<typeof PromoteBody>;

export const ForgetBody = z.strictObject({
  /** Forget it even while a rollback request waits or its policy still selects its build (`forget --force`). */
  force: z.boolean().optional(),
});
export type ForgetBody = z.infer<typeof ForgetBody>;

export const RetryBody = z.strictObject({
  /** The outcomes whose Collectors get one new attempt (`retry --only`). */
  only: z
    .array(z.enum(RETRYABLE_STATES, { error: `expected one of ${RETRYABLE_STATES.join(', ')}` }))
    .min(1, { error: `list at least one of ${RETRYABLE_STATES.join(', ')}` })
    .max(RETRYABLE_STATES.length * 2),
  /** Only this organization's Collectors (`retry --org`). */
  org,
});
export type RetryBody = z.infer<typeof RetryBody>;

export const RollbackBody = z
  .strictObject({
    /** The outcomes whose Collectors go back (`rollback --only`); default unhealthy, failed, timed_out. */
    only: z
      .array(z.enum(ROLLBACK_STATES, { error: `expected one of ${ROLLBACK_STATES.join(', ')}` }))
      .min(1, { error: `list at least one of ${ROLLBACK_STATES.join(', ')}` })
      .max(ROLLBACK_STATES.length * 2)
      .optional(),
    /** Every Collector whose task ran (`rollback --all`). */
    all: z.boolean().optional(),
    /** Only this organization's Collectors (`rollback --org`). */
    org,
  })
  .refine((b) => !(b.only && b.all), { error: 'give only or all, not both' });
export type RollbackBody = z.infer<typeof RollbackBody>;

/**
 * The body limit of `POST /upgrades`: as many ids as the command takes (ONE_OFF_MAX_COLLECTORS)
 * at their longest (16 digits, a comma and a space: 18 bytes), and a control request's limit for
 * the other fields: 196,384 bytes, still bounded; every other control request keeps 16 KB.
 */
export const UPGRADE_BODY_LIMIT_BYTES = ONE_OFF_MAX_COLLECTORS * 18 + BODY_LIMIT_BYTES;

/**
 * `POST /upgrades`: a one-off rollout of the named Collectors, as `fleet-upgrade upgrade` takes it
 * (`--collector`, `--to`, `--allow-downgrade`, `--max-in-flight`, `--org`): up to
 * ONE_OFF_MAX_COLLECTORS ids, in a body of at most UPGRADE_BODY_LIMIT_BYTES.
 */
export const UpgradeBody = z.strictObject({
  collectors: z
    .array(
      z
        .number({ error: 'expected a Collector id (a positive whole number)' })
        .int({ error: 'expected a Collector id (a positive whole number)' })
        .positive({ error: 'expected a Collector id (a positive whole number)' })
        .max(Number.MAX_SAFE_INTEGER),
    )
    .min(1, { error: 'name at least one Collector' })
    .max(ONE_OFF_MAX_COLLECTORS, { error: `at most ${ONE_OFF_MAX_COLLECTORS} Collectors in one upgrade` }),
  to: z
    .string({ error: 'expected a build such as 19.470-4, or latest' })
    .refine((v) => v === LATEST || isBuildVersion(v), {
      error: 'expected "latest" or a build shaped <major>.<minor>-<build> such as 19.470-4',
    }),
  allowDowngrade: z.boolean().optional(),
  maxInFlight: z.number().int().min(1).max(100_000).optional(),
  /** The organization the ids are of: required when the settings name several. */
  org,
});
export type UpgradeBody = z.infer<typeof UpgradeBody>;

/** Every problem of a body in one line: `only[1]: expected one of ...; full: ...`. */
export function describeIssues(error: z.ZodError): string {
  return error.issues
    .map((i) => {
      const path = i.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${String(p)}`)).join('');
      return `${path ? path.replace(/^\./, '') : 'body'}: ${i.message}`;
    })
    .join('; ');
}
