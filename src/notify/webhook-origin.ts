/**
 * What of a webhook URL may reach a log line: its origin (scheme, host, port). The path and the
 * query stay out, since they often carry a token (Slack's incoming webhooks are a secret URL).
 */

/** The part of a webhook URL that may be logged: scheme, host and port. */
export function webhookOrigin(url: string): string {
  try {
    return new URL(url).origin;
  } catch {
    return '[invalid url]';
  }
}

/** `text` without the URL, its path or its query (an error message or a body that echoes them). */
export function scrubUrl(text: string, url: string): string {
  let out = text.split(url).join('[url]');
  try {
    const u = new URL(url);
    for (const part of [`${u.pathname}${u.search}`, u.pathname, u.search.slice(1)])
      if (part.length > 1) out = out.split(part).join('[redacted]');
  } catch {}
  return out;
}
