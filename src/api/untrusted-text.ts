/**
 * Text the vendor (or whatever answers in its place: a proxy, a captive portal) writes is
 * untrusted. Error codes, messages, request ids, content types, host names and task messages
 * reach error messages, logs, Redis, webhooks and terminals, so each goes through `clipText`:
 * one line, no control characters (terminal escapes, bidi overrides), at most a fixed length.
 * Only a bounded prefix of the input is ever looked at, so a 5 MB code costs no more than a
 * short one.
 */

/** Longest kept, in UTF-16 code units, before the `…` that marks a cut. */
export const TEXT_LIMITS = {
  /** A vendor message (`message`, `detail`), and a description of a body. */
  message: 300,
  /** A vendor error code: real ones are like `collector.in.upgrading`. */
  code: 100,
  /** A vendor request id: real ones are like `BOKTB-T8R2I-HESK0`. */
  requestId: 64,
  /** A media type named in a message. */
  mediaType: 80,
  /** A host name named in a message. */
  host: 100,
  /** A raw header value quoted in a log line. */
  header: 64,
  /** An upgrade task's `message` (the reason of a failure), kept with the task. */
  taskMessage: 500,
} as const;

// C0 and C1 controls, DEL, zero-width and bidi formatting characters, line/paragraph separators.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2069\ufeff]/g;

/** `text` as one line of at most `max` safe characters, plus `…` when it was cut. */
export function clipText(text: string, max: number): string {
  const window = max * 4 + 64;
  const head = text.length > window ? text.slice(0, window) : text;
  let line = head.replace(/\s+/g, ' ').replace(UNSAFE, '\ufffd').trim();
  let cut = head.length < text.length;
  if (line.length > max) {
    line = line.slice(0, max);
    cut = true;
  }
  // Never leave half of a surrogate pair at the cut.
  if (cut && /[\ud800-\udbff]$/.test(line)) line = line.slice(0, -1);
  return cut ? `${line}…` : line;
}

/** `8 MiB`, `64 KiB`, `1000 bytes`: a limit in bytes, for a message. */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024 && bytes % (1024 * 1024) === 0) return `${bytes / (1024 * 1024)} MiB`;
  if (bytes >= 1024 && bytes % 1024 === 0) return `${bytes / 1024} KiB`;
  return `${bytes} bytes`;
}
