/**
 * The one scrubber of secrets the product sends from the text that comes back. A receiver, a
 * proxy or a misconfigured service may echo a request's credentials in its answer (a 401 page
 * that quotes the `Authorization` header, a JSON error that repeats the token); that answer's
 * text is kept (Collector records, analysis measurements, events, logs, webhooks), so it is
 * scrubbed where it is read, before any of it is cut or kept:
 *
 * - the analysis gates' header values (src/analysis/measure.ts),
 * - a webhook's basic-auth credentials (src/notify/send-webhook.ts),
 * - the service's Basic credentials: access ID and key (src/api/api-caller.ts).
 *
 * A secret is found in the forms an echo takes: as sent, without its scheme (`Bearer x` → `x`),
 * a Basic value decoded (`id:key`, and the key alone), percent-encoded and JSON-escaped. A text
 * that was cut short may end in the first characters of a secret: with `cut`, such an ending is
 * dropped too.
 */

/** What stands in for a secret. */
export const REDACTED = '[redacted]';

/** Shorter pieces are not looked for (they would match ordinary words). */
const MIN_SECRET_LENGTH = 6;
/** A cut-off ending this long that begins a secret is dropped (with `cut`). */
const MIN_PARTIAL_LENGTH = 3;

/** The forms in which `value` (a header value, a password, a key) may come back. */
export function secretForms(value: string): string[] {
  const bare = value.trim();
  const forms = new Set<string>([bare]);
  const scheme = /^([A-Za-z][A-Za-z0-9._-]*)\s+(\S.*)$/.exec(bare);
  if (scheme) {
    const credentials = scheme[2] as string;
    forms.add(credentials);
    if (scheme[1]?.toLowerCase() === 'basic') {
      const decoded = Buffer.from(credentials, 'base64').toString('utf8');
      if (
        Buffer.from(decoded, 'utf8').toString('base64').replace(/=+$/, '') === credentials.replace(/=+$/, '')
      ) {
        forms.add(decoded);
        const colon = decoded.indexOf(':');
        if (colon >= 0) forms.add(decoded.slice(colon + 1));
      }
    }
  }
  for (const f of [...forms]) {
    forms.add(encodeURIComponent(f));
    forms.add(JSON.stringify(f).slice(1, -1));
  }
  return [...forms].filter((f) => f.length >= MIN_SECRET_LENGTH);
}

/**
 * A scrubber of the `secrets` (each given as sent; see `secretForms`). Longer forms are replaced
 * first, so that a secret inside another is not half left.
 */
export function createScrubber(secrets: readonly string[]): Scrubber {
  const forms = [...new Set(secrets.flatMap(secretForms))].sort((a, b) => b.length - a.length);
  return {
    scrub(text, options = {}) {
      if (forms.length === 0 || text === '') return text;
      let out = text;
      for (const f of forms) if (out.includes(f)) out = out.split(f).join(REDACTED);
      if (options.cut) out = dropPartialEnd(out, forms);
      return out;
    },
    get active() {
      return forms.length > 0;
    },
  };
}

export interface Scrubber {
  /** `text` with every form of every secret replaced; `cut`: the text was cut short at its end. */
  scrub(text: string, options?: { cut?: boolean }): string;
  /** Whether it looks for anything. */
  readonly active: boolean;
}

/** A scrubber that looks for nothing. */
export const NO_SECRETS: Scrubber = createScrubber([]);

/** Two scrubbers as one. */
export function joinScrubbers(...scrubbers: readonly Scrubber[]): Scrubber {
  const active = scrubbers.filter((s) => s.active);
  return {
    scrub: (text, options) => active.reduce((t, s) => s.scrub(t, options), text),
    get active() {
      return active.length > 0;
    },
  };
}

function dropPartialEnd(text: string, forms: readonly string[]): string {
  let longest = 0;
  for (const f of forms)
    for (let n = Math.min(f.length - 1, text.length); n >= MIN_PARTIAL_LENGTH && n > longest; n--)
      if (text.endsWith(f.slice(0, n))) {
        longest = n;
        break;
      }
  return longest ? `${text.slice(0, text.length - longest)}${REDACTED}` : text;
}
