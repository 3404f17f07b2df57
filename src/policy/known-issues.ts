/**
 * `knownIssues` of a policy: builds known to break some Collectors (release notes name such
 * problems: upgrades through the API that fail for a non-root Collector, macOS Collectors that
 * stop until restarted by hand). A Collector that matches an entry's `select` never gets a task
 * for a build that matches its `build`: `skip` leaves it out (shown with the note in `plan`,
 * `status`, `report`), `manual` puts it on the worklist with the note. Matching is
 * known-issue-match.ts; the Collector's state is rollout/collector's `held`.
 */
import { z } from 'zod';
import { globProblem } from './select/compile-glob.js';
import { Selection } from './select/selection.js';

export const KNOWN_ISSUE_ACTIONS = ['skip', 'manual'] as const;
export type KnownIssueAction = (typeof KNOWN_ISSUE_ACTIONS)[number];
/** Longest note, in characters: one sentence for `status`, `report` and the worklist. */
export const MAX_NOTE_LENGTH = 300;
/** Most entries in one policy. */
export const MAX_KNOWN_ISSUES = 100;

const buildGlob = z
  .string({
    error: (iss) =>
      iss.input === undefined ? 'required field is missing' : 'expected a build or a glob such as 19.516-*',
  })
  .trim()
  .min(1, 'must not be empty')
  .superRefine((pattern, ctx) => {
    const problem = globProblem(pattern);
    if (problem) ctx.addIssue({ code: 'custom', message: `not a valid glob: ${problem}` });
  });

export const KnownIssue = z.strictObject({
  /** The builds affected: a build (`19.516-1`) or a glob (`19.516-*`). Required. */
  build: buildGlob,
  /** The Collectors affected, in the syntax of `select`. Default: every Collector of the policy. */
  select: Selection.default({}),
  /** `skip` (left out, with the note) or `manual` (on the worklist, with the note). Default `skip`. */
  action: z
    .enum(KNOWN_ISSUE_ACTIONS, {
      error: (iss) => `expected skip or manual, got ${JSON.stringify(iss.input)}`,
    })
    .default('skip'),
  /** What is wrong, for the people who read `status`, `report` and the worklist. Required. */
  note: z
    .string({ error: (iss) => (iss.input === undefined ? 'required field is missing' : 'expected text') })
    .trim()
    .min(1, 'must not be empty')
    .max(MAX_NOTE_LENGTH, `must be at most ${MAX_NOTE_LENGTH} characters`),
});
export type KnownIssue = z.infer<typeof KnownIssue>;

export const KnownIssues = z
  .array(KnownIssue, { error: 'expected a list of { build, select, action, note }' })
  .max(MAX_KNOWN_ISSUES, `at most ${MAX_KNOWN_ISSUES} entries`);
