/**
 * Text from outside (Collector names, the service's messages, operators' reasons) printed on a
 * terminal: control characters (escape sequences among them) are shown as `?`, so that no name
 * can move the cursor or change the terminal's colours.
 */
export function sanitize(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: that is what it strips
  return text.replace(/[\u0000-\u0008\u000b-\u001f\u007f-\u009f]/g, '?');
}
