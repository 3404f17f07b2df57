/**
 * Text from outside (Collector names, host names and OS names from the vendor, the service's
 * messages, operators' reasons) printed on a terminal: control characters are shown as `?`, so
 * that no name can move the cursor, change the terminal's colours or title, open a hyperlink
 * (OSC 8), ring the bell, erase what came before it (backspace), or reorder what follows it
 * (bidi overrides and isolates). The set is the one `src/api/untrusted-text.ts` clips: C0 and C1
 * controls, DEL, zero-width and bidi formatting characters, line and paragraph separators.
 * JSON for a terminal (`--json`) keeps such characters, escaped as `\uXXXX` (`safeJson`).
 */

const CONTROLS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** Beyond C0 (which JSON.stringify escapes itself): what `safeJson` escapes. */
const JSON_UNSAFE = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2060-\u2069\ufeff]/g;

/** `text` with every control character (tab and line feed excepted) shown as `?`. */
export function sanitize(text: string): string {
  return text.replace(CONTROLS, '?');
}

/** `text` on one line: runs of white space (line feeds and tabs included) as one space, then `sanitize`. */
export function sanitizeLine(text: string): string {
  return sanitize(text.replace(/[\s\u0085]+/g, ' ').trim());
}

/**
 * `JSON.stringify(value, null, space)` with the characters that a terminal would act on escaped
 * (`\u009b`, `\u202e`): the same JSON to a parser, harmless on a screen.
 */
export function safeJson(value: unknown, space?: number): string {
  return JSON.stringify(value, null, space).replace(
    JSON_UNSAFE,
    (c) => `\\u${(c.codePointAt(0) as number).toString(16).padStart(4, '0')}`,
  );
}
