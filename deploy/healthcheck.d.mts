// Types of healthcheck.mjs (plain ESM, so that the image runs it with node alone).

/** The URL the container's command serves its health at, or undefined when it serves none. */
export function healthUrl(
  argv: readonly string[],
  env: Record<string, string | undefined>,
): string | undefined;

/** 0 when `url` answers 2xx within 2 s (or there is nothing to ask), else 1. */
export function check(url: string | undefined): Promise<number>;
