/**
 * The CLI acting as a person through a daemon's HTTP API (docs/access.md): `--server URL` (or
 * `FLEET_UPGRADE_SERVER`), with the person's token from `FLEET_UPGRADE_TOKEN` or
 * `FLEET_UPGRADE_TOKEN_FILE` (never a flag: it would show in `ps` and the shell's history). An
 * answer's error keeps the exit code of the same refusal on Redis: 404 and 400 exit 64, 409 exits
 * 3, 401 and 403 exit 77; 429 and 5xx exit 1. Nothing of the token is ever printed.
 */
import { readFileSync } from 'node:fs';
import { request } from 'undici';
import { FleetError } from '../../lib/errors.js';
import { ControlError } from '../../rollout/index.js';

/** Longest answer read from the daemon for one action (a report streams separately). */
const ANSWER_LIMIT = 1_000_000;
const TIMEOUT_MS = 30_000;

export interface ServerTarget {
  url: string;
  /** The bearer token; undefined: none (a loopback daemon without one). */
  token?: string;
}

const usage = (message: string) => new FleetError('FLEET_ERR_USAGE', message);

/** The daemon to act through, when `--server` or `FLEET_UPGRADE_SERVER` names one. */
export function serverOf(
  flags: { server?: string },
  env: NodeJS.ProcessEnv,
  readFile: (path: string) => string = (p) => readFileSync(p, 'utf8'),
): ServerTarget | undefined {
  const raw = flags.server ?? env.FLEET_UPGRADE_SERVER;
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw usage(
      `--server: expected a URL like https://fleet-upgrade.example:9464, not '${raw.slice(0, 80)}'`,
    );
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw usage(`--server: expected an http or https URL, not ${url.protocol}`);
  if (url.username || url.password)
    throw usage(
      '--server: a URL with credentials is refused; set FLEET_UPGRADE_TOKEN or FLEET_UPGRADE_TOKEN_FILE',
    );
  const inline = env.FLEET_UPGRADE_TOKEN?.trim();
  const file = env.FLEET_UPGRADE_TOKEN_FILE?.trim();
  if (inline && file)
    throw usage('FLEET_UPGRADE_TOKEN and FLEET_UPGRADE_TOKEN_FILE are both set; set only one');
  let token = inline || undefined;
  if (file) {
    try {
      token = readFile(file).trim();
    } catch (err) {
      throw usage(
        `FLEET_UPGRADE_TOKEN_FILE: cannot read ${file} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
      );
    }
    if (!token) throw usage(`FLEET_UPGRADE_TOKEN_FILE: ${file} is empty`);
  }
  return { url: url.toString().replace(/\/$/, ''), ...(token ? { token } : {}) };
}

/** The error that an HTTP refusal is, with the exit code of the same refusal on Redis. */
export function refusalOf(status: number, message: string): Error {
  if (status === 404) return new ControlError('not_found', message);
  if (status === 409) return new ControlError('conflict', message);
  if (status === 400 || status === 413 || status === 415) return new ControlError('invalid', message);
  if (status === 401 || status === 403) return new ControlError('forbidden', message);
  return new FleetError('FLEET_ERR_SERVER', `the daemon answered ${status}: ${message}`);
}

/** Calls the daemon; answers the parsed JSON of a 2xx, or throws the refusal (refusalOf). */
export async function callServer(
  server: ServerTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
): Promise<unknown> {
  const answer = await askServer(server, method, path, { body });
  if (answer.status >= 200 && answer.status < 300) return answer.json;
  throw refusalOfAnswer(answer);
}

/** The refusal an answer that is not 2xx is (refusalOf), from its `error.message`. */
export function refusalOfAnswer(answer: { status: number; json: unknown }): Error {
  const message = (answer.json as { error?: { message?: unknown } })?.error?.message;
  return refusalOf(answer.status, typeof message === 'string' ? message : `status ${answer.status}`);
}

/**
 * Calls the daemon and answers its status, JSON body (undefined for a 304) and ETag, whatever the
 * status: for a caller that reads what a refusal says beside its message (`upgrade`'s 409), or
 * sends `If-None-Match` (`status --watch`). `limit`: the longest body read (default 1 MB).
 */
export async function askServer(
  server: ServerTarget,
  method: 'GET' | 'POST',
  path: string,
  o: { body?: unknown; ifNoneMatch?: string; limit?: number } = {},
): Promise<{ status: number; json: unknown; etag?: string; headers: Record<string, unknown> }> {
  const res = await openServer(server, method, path, o.body, o.ifNoneMatch);
  const text = await readLimited(res.body, o.limit ?? ANSWER_LIMIT);
  const etag = typeof res.headers.etag === 'string' ? { etag: res.headers.etag } : {};
  const { headers } = res;
  if (res.statusCode === 304) return { status: 304, json: undefined, ...etag, headers };
  try {
    return { status: res.statusCode, json: text ? JSON.parse(text) : {}, ...etag, headers };
  } catch {
    throw new FleetError(
      'FLEET_ERR_SERVER',
      `the daemon answered ${res.statusCode} with a body that is not JSON`,
    );
  }
}

/** Opens a request to the daemon (its body to be read by the caller: a stream). */
export async function openServer(
  server: ServerTarget,
  method: 'GET' | 'POST',
  path: string,
  body?: unknown,
  ifNoneMatch?: string,
) {
  try {
    return await request(`${server.url}${path}`, {
      method,
      headers: {
        ...(server.token ? { authorization: `Bearer ${server.token}` } : {}),
        ...(ifNoneMatch ? { 'if-none-match': ifNoneMatch } : {}),
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      headersTimeout: TIMEOUT_MS,
      bodyTimeout: TIMEOUT_MS,
    });
  } catch (err) {
    throw new FleetError(
      'FLEET_ERR_SERVER',
      `cannot reach the daemon at ${server.url} (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
    );
  }
}

async function readLimited(body: AsyncIterable<Buffer>, limit: number): Promise<string> {
  const parts: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    size += chunk.length;
    if (size > limit)
      throw new FleetError('FLEET_ERR_SERVER', `the daemon answered more than ${limit / 1_000_000} MB`);
    parts.push(chunk);
  }
  return Buffer.concat(parts).toString('utf8');
}
