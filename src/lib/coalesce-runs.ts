/**
 * One run at a time of `work`, and callers that come while it runs share the next one: each
 * caller's promise settles with a run that started after its call (so that run saw whatever the
 * caller did before calling), but N callers during a run cost one more run, not N. For work that
 * looks at the whole state each time (an admission over every organization of a rollout after a
 * page of any of them: watch-step.ts), where N queued runs would each redo what the first did.
 */
export function coalesceRuns<T>(work: () => Promise<T>): () => Promise<T> {
  let running: Promise<T> | undefined;
  let next: Promise<T> | undefined;
  const start = (): Promise<T> => {
    const run: Promise<T> = Promise.resolve()
      .then(work)
      .finally(() => {
        if (running === run) running = undefined;
      });
    running = run;
    return run;
  };
  return () => {
    if (!running && !next) return start();
    // Started once the current run has ended (failed or not), shared by every caller until then.
    next ??= (running ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        next = undefined;
        return start();
      });
    return next;
  };
}
