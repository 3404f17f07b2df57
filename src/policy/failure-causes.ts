/**
 * `failureCauses` of a policy: what to do with a Collector whose task the service reports
 * `failed`, by the cause its message names. The service's messages are classified
 * (worker/classify-failure.ts) into the built-in classes below, or into classes that the
 * policy's own `patterns` name (checked before the built-ins); each class maps to an action:
 *
 * - `retry`: a new attempt through the admitter after `backoff`, at most `attempts` times (new
 *   attempts after the first task); then the Collector ends `failed`;
 * - `manual`: the Collector goes to the worklist (`report --worklist`), is not counted by the
 *   failure gate and is not tried again until an operator does (`retry`);
 * - `fail`: the Collector ends `failed` (what every failure did before causes existed).
 *
 * Defaults: network → retry 3 × 10m (the vendor names the network among the usual causes, and it
 * heals by itself); upgrades_disabled, permission, disk_space → manual (a person must change the
 * Collector's settings or rights, or free space: retrying only fails again); unknown → fail.
 * A class named only by a pattern takes the action of `unknown` unless `actions` names it.
 */
import { z } from 'zod';
import { unknownFieldReason } from '../lib/source/yaml-source.js';
import { durationField, ms } from './duration-field.js';
import { checkSafePattern } from './select/check-safe-pattern.js';

/** The classes the classifier knows without a policy, `unknown` last (nothing matched). */
export const BUILTIN_FAILURE_CLASSES = [
  'disk_space',
  'upgrades_disabled',
  'permission',
  'network',
  'unknown',
] as const;
export type BuiltinFailureClass = (typeof BUILTIN_FAILURE_CLASSES)[number];

/** At most this many patterns per policy. */
export const MAX_FAILURE_PATTERNS = 50;
/** At most this many characters per pattern. */
export const MAX_FAILURE_PATTERN_LENGTH = 500;

const CLASS_NAME = /^[a-z][a-z0-9_]*$/;
const CLASS_HINT = 'must be lowercase letters, digits and underscores, starting with a letter';

const className = z
  .string({ error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected text') })
  .max(40, 'must be at most 40 characters')
  .regex(CLASS_NAME, CLASS_HINT);

/**
 * Compiles a pattern as the classifier matches it (case-insensitive), or says why it is refused:
 * it does not compile, or it fails the check of check-safe-pattern.ts.
 */
export function compileFailurePattern(match: string): RegExp | { refused: string } {
  let regex: RegExp;
  try {
    regex = new RegExp(match, 'i');
  } catch (err) {
    return { refused: `not a valid regular expression: ${(err as Error).message}` };
  }
  const unsafe = checkSafePattern(match);
  return unsafe === undefined ? regex : { refused: `refused: ${unsafe}` };
}

export const FailurePattern = z.strictObject({
  /** The class a matching message gets: a built-in one or a new name (`[a-z][a-z0-9_]*`). Required. */
  class: className,
  /** A regular expression, matched case-insensitively anywhere in the message's first 2,000 characters. Required. */
  match: z
    .string({ error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected text') })
    .min(1, 'must not be empty')
    .max(MAX_FAILURE_PATTERN_LENGTH, `must be at most ${MAX_FAILURE_PATTERN_LENGTH} characters`)
    .superRefine((match, ctx) => {
      const compiled = compileFailurePattern(match);
      if (!(compiled instanceof RegExp)) ctx.addIssue({ code: 'custom', message: compiled.refused });
    }),
});
export type FailurePattern = z.infer<typeof FailurePattern>;

/** A new attempt through the admitter after `backoff`, at most `attempts` times; then `failed`. */
export interface RetryAction {
  action: 'retry';
  /** New attempts after the failed one, 1..20. Default 3. */
  attempts: number;
  /** Milliseconds between a failure and the next attempt, at most 24h. Default 10m. */
  backoff: number;
}
/** The Collector goes to the worklist, is not counted by the gate and waits for an operator. */
export interface ManualAction {
  action: 'manual';
}
/** The Collector ends `failed`. */
export interface FailAction {
  action: 'fail';
}

export const FAILURE_ACTIONS = ['retry', 'manual', 'fail'] as const;
const ACTION_HINT = 'expected retry, manual or fail';
const DEFAULT_RETRY_ATTEMPTS = 3;
const DEFAULT_RETRY_BACKOFF = ms('10m');

const FailureActionFields = z
  .strictObject(
    {
      action: z.enum(FAILURE_ACTIONS, {
        error: (iss) =>
          iss.input === undefined
            ? `required field is missing (${ACTION_HINT})`
            : `${ACTION_HINT}, got ${JSON.stringify(iss.input)}`,
      }),
      attempts: z
        .number({ error: (iss) => `expected a whole number, got ${JSON.stringify(iss.input)}` })
        .int('must be a whole number')
        .min(1, 'must be at least 1')
        .max(20, 'must be at most 20')
        .optional(),
      backoff: durationField({ max: ms('24h') }).optional(),
    },
    {
      error: (iss) =>
        `${ACTION_HINT} (or an object such as { action: retry, attempts: 3, backoff: 10m }), got ${JSON.stringify(iss.input)}`,
    },
  )
  .superRefine((written, ctx) => {
    if (written.action === 'retry') return;
    for (const field of ['attempts', 'backoff'] as const) {
      if (written[field] !== undefined) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `applies only to action: retry, not ${written.action}`,
        });
      }
    }
  });

/**
 * What to do with a failure of one class: `{ action: retry, attempts, backoff }` (defaults 3 and
 * 10m), `{ action: manual }` or `{ action: fail }`; a bare word stands for the object.
 */
export const FailureAction = z.preprocess(
  (value) => (typeof value === 'string' ? { action: value } : value),
  FailureActionFields.transform((written): RetryAction | ManualAction | FailAction =>
    written.action === 'retry'
      ? {
          action: 'retry',
          attempts: written.attempts ?? DEFAULT_RETRY_ATTEMPTS,
          backoff: written.backoff ?? DEFAULT_RETRY_BACKOFF,
        }
      : { action: written.action },
  ),
);
export type FailureAction = z.infer<typeof FailureAction>;

/** The actions of the built-in classes when a policy names none (see the header for why). */
export const DEFAULT_FAILURE_ACTIONS: Readonly<Record<BuiltinFailureClass, FailureAction>> = {
  disk_space: { action: 'manual' },
  upgrades_disabled: { action: 'manual' },
  permission: { action: 'manual' },
  network: { action: 'retry', attempts: DEFAULT_RETRY_ATTEMPTS, backoff: DEFAULT_RETRY_BACKOFF },
  unknown: { action: 'fail' },
};

const FailureCausesFields = z.strictObject({
  /** Patterns checked in order before the built-in ones; the first match names the class. At most 50. Default none. */
  patterns: z
    .array(FailurePattern, { error: 'expected a list of { class, match }' })
    .max(MAX_FAILURE_PATTERNS, `at most ${MAX_FAILURE_PATTERNS} patterns`)
    .default([]),
  /** Action per class; a class not named keeps its default (built-ins) or takes `unknown`'s (pattern classes). */
  actions: z.record(z.string(), FailureAction, { error: 'expected a map of class: action' }).default({}),
});

/**
 * The policy's `failureCauses`, parsed: `patterns` as written (strings; the classifier compiles
 * them) and `actions` for every built-in class plus the classes the policy names.
 * Integrate with `failureCauses: FailureCauses.prefault({})`.
 */
export const FailureCauses = FailureCausesFields.superRefine((causes, ctx) => {
  const known = [...new Set([...BUILTIN_FAILURE_CLASSES, ...causes.patterns.map((p) => p.class)])];
  for (const name of Object.keys(causes.actions)) {
    if (known.includes(name)) continue;
    const hint = /\(did you mean .*\)/.exec(unknownFieldReason(name, known))?.[0];
    ctx.addIssue({
      code: 'custom',
      path: ['actions', name],
      message: `unknown failure class${hint ? ` ${hint}` : ''}: the classes are ${known.join(', ')}`,
    });
  }
}).transform((causes) => ({
  patterns: causes.patterns,
  actions: { ...DEFAULT_FAILURE_ACTIONS, ...causes.actions } as Record<string, FailureAction>,
}));
export type FailureCauses = z.infer<typeof FailureCauses>;
