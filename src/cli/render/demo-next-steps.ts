/**
 * What the demo says last: three next steps, as commands that work when copied from the project
 * folder. Everything the demo started is gone when it ends, so the first step starts the same
 * rehearsal as a daemon (the simulator in one terminal, `run` in another, with the settings the
 * demo used: the fleet file's first user, its time scale), whose metrics and `status` the next
 * step reads; the last one edits the policy and runs the demo again. `run` needs the Redis the
 * demo had: a redis-server on PATH (its private Redis in .data, which `status` finds), or
 * REDIS_URL, said in a line of its own.
 */

import { wrapText } from './format-status.js';

/** How the demo found Redis: REDIS_URL the user set, one that `npm run demo` started for it, or PATH. */
export type DemoRedis = 'env' | 'container' | 'local';

export interface NextStepsInput {
  fleetFile: string;
  policyFile: string;
  timeScale: number;
  user: { accessId: string; accessKey: string };
  redis: DemoRedis;
  /** The demo's defaults: flags equal to them are left out of `npm run demo`. */
  defaults: { fleetFile: string; policyFile: string; timeScale: number };
  /**
   * The command as typed from this folder (default `./bin/fleet-upgrade.js`): a local path starts
   * at once, where a first `npx fleet-upgrade` spent half a minute resolving the package.
   */
  command?: string;
}

/** The simulator's port and `run`'s HTTP address in the steps (the defaults of `run`). */
export const NEXT_STEPS_PORTS = { simulator: 8080, metrics: 9464 } as const;

/** A word as a POSIX shell reads it back: quoted only when it must be. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/**
 * A command as lines of at most `width` columns: broken between words (or groups of words, such
 * as a flag and its value), each line but the last ending in ` \` so that a shell reads it back
 * as one command; a word is never broken.
 */
export function commandLines(words: readonly string[], indent = '       ', width = 80): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of words) {
    if (line && `${line} ${word}`.length + 2 > width) {
      lines.push(`${line} \\`);
      line = `${indent}  ${word}`;
    } else line = line ? `${line} ${word}` : `${indent}${word}`;
  }
  if (line) lines.push(line);
  return lines;
}

export function nextSteps(input: NextStepsInput): string[] {
  const { user, timeScale } = input;
  const { simulator, metrics } = NEXT_STEPS_PORTS;
  const cli = shellWord(input.command ?? './bin/fleet-upgrade.js');
  // Groups of words that stay on one line: a flag with its value.
  const simulate = [
    `${cli} simulate`,
    `--fleet ${shellWord(input.fleetFile)}`,
    `--time-scale ${timeScale}`,
    `--port ${simulator}`,
  ];
  const env = [
    `SUMOLOGIC_BASE_URL=http://127.0.0.1:${simulator}/api/v1`,
    `SUMOLOGIC_ACCESSID=${shellWord(user.accessId)}`,
    `SUMOLOGIC_ACCESSKEY=${shellWord(user.accessKey)}`,
    `FLEET_UPGRADE_TIME_SCALE=${timeScale}`,
  ];
  const run = [...env, `${cli} run`, `--policy ${shellWord(input.policyFile)}`];
  const demoFlags = [
    input.fleetFile !== input.defaults.fleetFile ? `--fleet ${shellWord(input.fleetFile)}` : '',
    input.policyFile !== input.defaults.policyFile ? `--policy ${shellWord(input.policyFile)}` : '',
    timeScale !== input.defaults.timeScale ? `--time-scale ${timeScale}` : '',
  ].filter(Boolean);
  const demo = demoFlags.length ? ['npm run demo --', ...demoFlags] : ['npm run demo'];
  const redis = {
    local: [],
    env: ['     (with REDIS_URL set as for this demo: `run` and `status` use that Redis)'],
    container: [
      "     (first a Redis: this demo's container is gone; e.g.",
      '     `docker run -d -p 6379:6379 redis:7-alpine` and',
      '     `export REDIS_URL=redis://127.0.0.1:6379` in the terminals of `run` and `status`)',
    ],
  }[input.redis];
  return [
    'Next steps, from this folder:',
    '  1. Run the same rehearsal as a daemon: the simulator in one terminal,',
    ...commandLines(simulate),
    '     the orchestrator in another,',
    ...commandLines(run),
    ...redis,
    `  2. Open its metrics at http://127.0.0.1:${metrics}/metrics, and in a third`,
    '     terminal see what each rollout does and waits for:',
    `       ${cli} status --watch`,
    ...wrapText(
      `Edit ${input.policyFile} (maxInFlight, waves, failureGate, verify) and rehearse again:`,
      80,
      '  3.',
      '     ',
    ),
    ...commandLines(demo),
  ];
}
