/**
 * Waits for `work` at most `ms` real milliseconds; after that resolves to `fallback()` instead
 * (or rejects with what `fallback` throws).
 */
export async function withTimeout<T>(work: Promise<T>, ms: number, fallback: () => T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      work,
      new Promise<T>((resolve, reject) => {
        timer = setTimeout(() => {
          try {
            resolve(fallback());
          } catch (err) {
            reject(err);
          }
        }, ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
