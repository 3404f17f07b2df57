/** Durations written like `500ms`, `90s`, `10m`, `2h`, `1d` (or combined: `1h30m`). */
const UNIT_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
const PART = /(\d+(?:\.\d+)?)(ms|s|m|h|d)/g;
const WHOLE = /^(?:\d+(?:\.\d+)?(?:ms|s|m|h|d))+$/;

/** Whether the text is written like a duration, whatever its size (`999…9d` is). */
export function isDurationText(text: string): boolean {
  return WHOLE.test(text.trim());
}

/**
 * Milliseconds, or undefined when the text is not a duration or its value is too large for a
 * number (400 digits): never Infinity, which would pass for "no limit" downstream.
 */
export function parseDuration(text: string): number | undefined {
  const t = text.trim();
  if (!WHOLE.test(t)) return undefined;
  let total = 0;
  for (const m of t.matchAll(PART)) total += Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return Number.isFinite(total) ? total : undefined;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  const sec = s % 60;
  return [h ? `${h}h` : '', m ? `${m}m` : '', sec || (!h && !m) ? `${sec}s` : ''].join('');
}
