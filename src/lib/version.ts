/**
 * Collector build versions are shaped `<major>.<minor>-<build>` (e.g. `19.470-4`) and are
 * compared numerically, part by part, never as strings.
 */
export const BUILD_VERSION_PATTERN = /^(\d+)\.(\d+)-(\d+)$/;

export type BuildVersion = readonly [major: number, minor: number, build: number];

export function parseBuildVersion(text: string): BuildVersion | undefined {
  const m = BUILD_VERSION_PATTERN.exec(text);
  if (!m) return undefined;
  return [Number(m[1]), Number(m[2]), Number(m[3])];
}

export function isBuildVersion(text: string): boolean {
  return BUILD_VERSION_PATTERN.test(text);
}

/** Negative when a < b, 0 when equal, positive when a > b. Throws on a malformed version. */
export function compareBuildVersions(a: string, b: string): number {
  const pa = parseBuildVersion(a);
  const pb = parseBuildVersion(b);
  if (!pa) throw new RangeError(`not a build version: ${JSON.stringify(a)}`);
  if (!pb) throw new RangeError(`not a build version: ${JSON.stringify(b)}`);
  for (let i = 0; i < 3; i++) {
    const d = (pa[i] as number) - (pb[i] as number);
    if (d !== 0) return d;
  }
  return 0;
}
