/**
 * The console's one way to the daemon: same-origin requests as the person signed in. A pasted
 * token is kept in this module's memory only (never in a URL, a cookie, localStorage or
 * sessionStorage): a reload forgets it. Without a token the request goes as it is, so the proxy's
 * identity (its cookie, its headers) or the loopback rule of the daemon decides.
 */
let token: string | undefined;

export function signIn(pasted: string | undefined): void {
  token = pasted?.trim() || undefined;
}

export function hasToken(): boolean {
  return token !== undefined;
}

export interface Answer<T = unknown> {
  status: number;
  ok: boolean;
  /** The JSON body, when it is JSON. */
  json?: T;
  /** The body as sent (the server's answer shown as it is). */
  text: string;
}

function headers(extra: Record<string, string> = {}): Record<string, string> {
  return { ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra };
}

/** The last answer of each read with an ETag: sent back, a 304 returns the same object (no redraw). */
const tagged = new Map<string, { etag: string; answer: Answer; who: string | undefined }>();

export async function call<T = unknown>(
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<Answer<T>> {
  const last = method === 'GET' ? tagged.get(path) : undefined;
  const known: Record<string, string> = last && last.who === token ? { 'if-none-match': last.etag } : {};
  const res = await fetch(path, {
    method,
    credentials: 'same-origin',
    cache: 'no-store',
    headers: headers(
      method === 'POST' ? { 'content-type': 'application/json' } : { accept: 'application/json', ...known },
    ),
    ...(method === 'POST' ? { body: JSON.stringify(body ?? {}) } : {}),
  });
  if (res.status === 304 && last) return last.answer as Answer<T>;
  const answer = await read<T>(res);
  const etag = res.headers.get('etag');
  if (method === 'GET' && etag && answer.ok) tagged.set(path, { etag, answer, who: token });
  return answer;
}

async function read<T>(res: Response): Promise<Answer<T>> {
  const text = await res.text();
  let json: T | undefined;
  try {
    json = JSON.parse(text) as T;
  } catch {
    json = undefined;
  }
  return { status: res.status, ok: res.ok, text, ...(json === undefined ? {} : { json }) };
}

/** A file of the API (the worklist's CSV) saved by the browser under `name`. */
export async function download(path: string, name: string): Promise<Answer> {
  const res = await fetch(path, { credentials: 'same-origin', cache: 'no-store', headers: headers() });
  const blob = await res.blob();
  if (res.ok) {
    const a = document.createElement('a');
    a.href = URL.createObjectURL(blob);
    a.download = name;
    document.body.append(a);
    a.click();
    a.remove();
    setTimeout(() => URL.revokeObjectURL(a.href), 10_000);
  }
  return { status: res.status, ok: res.ok, text: res.ok ? '' : await blob.text() };
}

/** The path of a rollout's endpoint (ids hold `@`, `/` is refused by the API anyway). */
export const rolloutPath = (id: string, sub = '') =>
  `/rollouts/${encodeURIComponent(id)}${sub ? `/${sub}` : ''}`;
