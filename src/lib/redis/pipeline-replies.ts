/** What an ioredis pipeline or MULTI answers: one [error, value] pair per command, or null. */
export type PipelineReply = [Error | null, unknown][] | null;

/** The values of a pipeline's replies; the first error is thrown. */
export function replies(result: PipelineReply): unknown[] {
  return (result ?? []).map(([err, value]) => {
    if (err) throw err;
    return value;
  });
}
