/**
 * The daemon's problems as `status` prints them above the table: one sentence each, saying what
 * is wrong, since when, and what ends it (the command or the fix), broken at the screen's width.
 * Times are on the deployment's clock, like every other time of the screen. Text from outside
 * (a policy file's reason, names) goes through `oneLine`.
 */
import type { FleetStatus } from '../../rollout/index.js';
import { formatWhen, oneLine } from './explain-rollout.js';
import { breakAfter } from './org-part-lines.js';

export type DaemonProblemView = FleetStatus['daemonProblems'][number];

/** One problem in one sentence: what, since when, then ` — ` and what ends it. */
export function daemonProblemText(p: DaemonProblemView, now: number): string {
  const since = `(since ${formatWhen(p.since, now)})`;
  const fix = oneLine(p.fix);
  switch (p.kind) {
    case 'policy_invalid': {
      const at = `${oneLine(p.file ?? p.subject)}${p.line === undefined ? '' : `:${p.line}`}`;
      const kept = p.keeping
        ? `the daemon keeps the last valid version of policy ${oneLine(p.keeping)}`
        : 'it is not loaded';
      return `policy file ${at} is invalid ${since}: ${oneLine(p.reason)}; ${kept} — ${fix}`;
    }
    case 'target_not_offered': {
      const again =
        p.nextCheckAt === undefined
          ? ''
          : `; the daemon looks again ${p.nextCheckAt > now ? `at ${formatWhen(p.nextCheckAt, now)}` : 'now'}`;
      return `policy ${oneLine(p.policy ?? p.subject)} ${since}: ${oneLine(p.reason)} — ${fix}${again}`;
    }
    case 'ring_undefined':
      return `policy ${oneLine(p.policy ?? p.subject)} ${since}: ${oneLine(p.reason)} — ${fix}`;
    case 'time_scale':
      return `${oneLine(p.process)} ${since}: ${oneLine(p.reason)} — ${fix}`;
    default:
      return `${oneLine(p.subject)} ${since}: ${oneLine(p.reason)} — ${fix}`;
  }
}

/** Every problem's sentence, unbroken (`width` undefined) or broken at `width`. */
export function daemonProblemLines(
  problems: readonly DaemonProblemView[],
  now: number,
  width?: number,
): string[] {
  return problems.flatMap((p) => {
    const text = daemonProblemText(p, now);
    return width === undefined ? [text] : breakAfter('', text, width, '  ');
  });
}
