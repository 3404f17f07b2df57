/**
 * When a worker reads a task's status next. Status reads cost API budget (4 requests/s per user), so
 * a rollout should read each task few times without noticing completions late:
 * - the first read comes after `poll.initial`, or, once this rollout has seen a few upgrades
 *   finish, not before the time by which the quickest tenth of them had finished (the scheduler
 *   learns that time with `learnFirstRead` and writes it onto the rollout; a step only reads it);
 * - later reads back off geometrically (every 20% of the time elapsed since the request), so a
 *   completion is noticed at most ~20% late, within [floor, poll.max];
 * - a read is never scheduled past the local deadline (request + taskTimeout);
 * - jitter spreads reads of tasks created together.
 */
export interface PollSettings {
  /** Delay of the first status read after the request, ms. */
  initialMs: number;
  /** Ceiling of the delay between two reads, ms. */
  maxMs: number;
  /** Spread of each delay, as a share of it (0.2 = ±20%). */
  jitter: number;
}

/** A completion is noticed at most this share of its duration late (before jitter and caps). */
export const LATENESS = 0.2;

export interface NextPollInput {
  /** Time since the task's request, ms. */
  elapsedMs: number;
  /** Time after the request of the first read (learnFirstRead; undefined: `initialMs`). */
  firstReadMs: number | undefined;
  settings: PollSettings;
  /** Time from the request after which the task counts as timed out locally, ms. */
  deadlineMs: number;
  /** Uniform random in [0, 1), for the jitter. */
  random: () => number;
}

/** Milliseconds from now until the next status read (at least 1). */
export function nextPollDelay(input: NextPollInput): number {
  const { elapsedMs, settings, deadlineMs } = input;
  const floor = Math.max(250, settings.initialMs / 4);
  const firstAt = Math.max(settings.initialMs, input.firstReadMs ?? settings.initialMs);
  let delay: number;
  let spread = settings.jitter * (input.random() * 2 - 1);
  if (elapsedMs < firstAt) {
    delay = firstAt - elapsedMs;
    // A learned first read is never pulled before the quickest tenth had finished.
    if (firstAt > settings.initialMs) spread = Math.abs(spread);
  } else delay = Math.min(settings.maxMs, Math.max(floor, LATENESS * elapsedMs));
  delay *= 1 + spread;
  // Read once more just after the deadline, so that a task the service finished is not called timed out.
  const untilDeadline = deadlineMs - elapsedMs;
  if (untilDeadline > 0 && delay > untilDeadline) delay = untilDeadline + 1;
  return Math.max(1, Math.round(delay));
}

/** A watched task's status is read this share of taskTimeout apart, in case nobody watches any more. */
export const WATCHED_FALLBACK_SHARE = 1 / 3;

/**
 * The delay of a watched task's next status read: the scheduler wakes the job when the listings
 * show the task ended, so a read is only a fallback, every third of taskTimeout, and once more
 * just after the deadline.
 */
export function watchedDelay(taskTimeoutMs: number, elapsedMs: number): number {
  const untilDeadline = taskTimeoutMs - elapsedMs;
  const fallback = taskTimeoutMs * WATCHED_FALLBACK_SHARE;
  return Math.max(1, Math.round(untilDeadline > 0 ? Math.min(fallback, untilDeadline + 1) : fallback));
}
