/**
 * The client's settings from the environment, as the ecosystem names them (Terraform provider,
 * CLIs): SUMOLOGIC_ACCESSID, SUMOLOGIC_ACCESSKEY or SUMOLOGIC_ACCESSKEY_FILE, and
 * SUMOLOGIC_BASE_URL or SUMOLOGIC_DEPLOYMENT. A pure function of its inputs: every problem is
 * reported at once, naming the variable, and the access key never appears in a message.
 */
import { readFileSync } from 'node:fs';
import { ConfigError, type SourceIssue } from '../lib/errors.js';

export const DEPLOYMENTS = ['us1', 'us2', 'eu', 'au', 'de', 'jp', 'ca', 'in', 'kr', 'fed', 'ch'] as const;
export type Deployment = (typeof DEPLOYMENTS)[number];

/** `https://api.sumologic.com/api/v1` for us1, `https://api.<deployment>.sumologic.com/api/v1` otherwise. */
export function baseUrlForDeployment(deployment: Deployment): string {
  return deployment === 'us1'
    ? 'https://api.sumologic.com/api/v1'
    : `https://api.${deployment}.sumologic.com/api/v1`;
}

export interface ApiConfig {
  /** Ends in the version segment, e.g. `https://api.eu.sumologic.com/api/v1`; no trailing slash. */
  baseUrl: string;
  accessId: string;
  /** Secret: never log it (the logger redacts `accessKey`). */
  accessKey: string;
}

export interface ReadApiConfigDeps {
  readFile(path: string): string;
}

const defaultDeps: ReadApiConfigDeps = { readFile: (path) => readFileSync(path, 'utf8') };

export function readApiConfig(
  env: Readonly<Record<string, string | undefined>>,
  deps: ReadApiConfigDeps = defaultDeps,
): ApiConfig {
  const issues: SourceIssue[] = [];
  const problem = (field: string, reason: string) => issues.push({ file: 'environment', field, reason });
  const value = (name: string) => {
    const v = env[name];
    return v === undefined || v.trim() === '' ? undefined : v.trim();
  };

  const accessId = value('SUMOLOGIC_ACCESSID');
  if (!accessId) problem('SUMOLOGIC_ACCESSID', 'is not set (the access ID of the API user)');
  else if (/[:\s]/.test(accessId)) problem('SUMOLOGIC_ACCESSID', 'must not contain a colon or white space');

  // Only the key has a _FILE variant. A SUMOLOGIC_ACCESSID_FILE would otherwise be ignored
  // silently, next to (or instead of) the SUMOLOGIC_ACCESSID that is used.
  if (value('SUMOLOGIC_ACCESSID_FILE'))
    problem(
      'SUMOLOGIC_ACCESSID_FILE',
      'is not supported: set SUMOLOGIC_ACCESSID itself (the access ID is not a secret)',
    );

  const accessKey = readAccessKey(env, deps, problem);

  const rawBase = value('SUMOLOGIC_BASE_URL');
  const rawDeployment = value('SUMOLOGIC_DEPLOYMENT');
  let baseUrl: string | undefined;
  if (rawBase && rawDeployment) {
    problem('SUMOLOGIC_BASE_URL', 'and SUMOLOGIC_DEPLOYMENT are both set; set only one of them');
  } else if (rawBase) {
    baseUrl = normaliseBaseUrl(rawBase, (reason) => problem('SUMOLOGIC_BASE_URL', reason));
  } else if (rawDeployment) {
    const dep = rawDeployment.toLowerCase();
    if ((DEPLOYMENTS as readonly string[]).includes(dep)) baseUrl = baseUrlForDeployment(dep as Deployment);
    else problem('SUMOLOGIC_DEPLOYMENT', `'${rawDeployment}' is not one of ${DEPLOYMENTS.join(', ')}`);
  } else {
    problem('SUMOLOGIC_BASE_URL', `is not set (nor SUMOLOGIC_DEPLOYMENT: one of ${DEPLOYMENTS.join(', ')})`);
  }

  if (issues.length > 0 || !accessId || !accessKey || !baseUrl) {
    const lines = issues.map((i) => `${i.field} ${i.reason}`);
    throw new ConfigError(`invalid Collector Upgrade Service settings: ${lines.join('; ')}`, issues);
  }
  return { baseUrl, accessId, accessKey };
}

function readAccessKey(
  env: Readonly<Record<string, string | undefined>>,
  deps: ReadApiConfigDeps,
  problem: (field: string, reason: string) => void,
): string | undefined {
  const inline = env.SUMOLOGIC_ACCESSKEY;
  const file = env.SUMOLOGIC_ACCESSKEY_FILE?.trim();
  if (inline?.trim() && file) {
    problem('SUMOLOGIC_ACCESSKEY', 'and SUMOLOGIC_ACCESSKEY_FILE are both set; set only one of them');
    return undefined;
  }
  if (file) {
    let text: string;
    try {
      text = deps.readFile(file);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code ?? 'unreadable';
      problem('SUMOLOGIC_ACCESSKEY_FILE', `cannot read ${file} (${code})`);
      return undefined;
    }
    // A mounted secret usually ends in a newline; anything else around the key is kept out too.
    const key = text.trim();
    if (!key) problem('SUMOLOGIC_ACCESSKEY_FILE', `${file} is empty`);
    else if (/\s/.test(key)) problem('SUMOLOGIC_ACCESSKEY_FILE', `${file} holds more than one line or word`);
    else return key;
    return undefined;
  }
  const key = inline?.trim();
  if (!key) {
    problem('SUMOLOGIC_ACCESSKEY', 'is not set (nor SUMOLOGIC_ACCESSKEY_FILE, a file holding the key)');
    return undefined;
  }
  return key;
}

/**
 * Accepts `https://api.eu.sumologic.com`, `.../api/` (as the Terraform provider writes it) and
 * `.../api/v1`, and returns the last form, which the interface's paths are relative to.
 */
export function normaliseBaseUrl(raw: string, problem: (reason: string) => void): string | undefined {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    problem(`'${raw}' is not a URL`);
    return undefined;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    problem(`must be an http(s) URL, got ${url.protocol}`);
    return undefined;
  }
  if (url.username || url.password) {
    problem('must not carry credentials (use SUMOLOGIC_ACCESSID and SUMOLOGIC_ACCESSKEY)');
    return undefined;
  }
  if (url.search || url.hash) {
    problem('must not carry a query or a fragment');
    return undefined;
  }
  let path = url.pathname.replace(/\/+$/, '');
  if (path === '') path = '/api/v1';
  else if (path.endsWith('/api')) path = `${path}/v1`;
  return `${url.origin}${path}`;
}
