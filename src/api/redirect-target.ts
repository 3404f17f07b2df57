/**
 * Where a 301 `moved` may take the client, and with it the basic-auth credentials. The service
 * answers a call to the wrong deployment with a 301 whose Location names the right one
 * (api-facts.md). The client follows it only to
 *   - a deployment of the service: `api.sumologic.com` or `api.<deployment>.sumologic.com`
 *     (one DNS label: us2, eu, fed, ... and any deployment added later), over https only;
 *   - the configured base URL's own host name (any port: a simulator or a proxy next to it),
 *     over https when the configured base URL is https.
 * Anything else is refused before a byte is sent there, with a reason that names the host.
 * A pure function; the caller (api-caller.ts) follows at most one redirect per client.
 */
import { clipText, TEXT_LIMITS } from './untrusted-text.js';

export type RedirectTarget = { ok: true; base: string } | { ok: false; reason: string };

const DEPLOYMENT_HOST = /^api(\.[a-z0-9-]{1,63})?\.sumologic\.com$/;

/** Whether `hostname` (lower case, as URL gives it) is an API host of the service. */
export function isDeploymentHost(hostname: string): boolean {
  return DEPLOYMENT_HOST.test(hostname);
}

export function redirectTarget(input: {
  /** The base URL the client was configured with. */
  configuredBase: string;
  /** The base URL the redirected request was sent to. */
  sentBase: string;
  /** The request's path relative to the base, without a leading slash. */
  path: string;
  location: string | undefined;
}): RedirectTarget {
  const { location } = input;
  if (!location) return { ok: false, reason: 'no Location header' };
  let target: URL;
  try {
    target = new URL(location, `${input.sentBase}/`);
  } catch {
    return { ok: false, reason: 'the Location header is not a URL' };
  }
  if (target.protocol !== 'https:' && target.protocol !== 'http:')
    return { ok: false, reason: 'Location is not http(s)' };
  const host = clipText(target.hostname, TEXT_LIMITS.host);
  if (target.username || target.password)
    return { ok: false, reason: `refusing to follow it to ${host}: the Location carries credentials` };
  const configured = new URL(input.configuredBase);
  if (configured.protocol === 'https:' && target.protocol !== 'https:')
    return { ok: false, reason: `refusing to send credentials from https to plain http (${host})` };
  const deployment = isDeploymentHost(target.hostname);
  if (deployment && target.protocol !== 'https:')
    return { ok: false, reason: `refusing to send credentials to ${host} over plain http` };
  if (!deployment && target.hostname !== configured.hostname)
    return {
      ok: false,
      reason:
        `refusing to send credentials to ${host}: it is neither a deployment of the service ` +
        `(api.sumologic.com, api.<deployment>.sumologic.com) nor the configured host ${configured.hostname}`,
    };
  const suffix = `/${input.path}`;
  const path = target.pathname.replace(/\/+$/, '');
  const from = new URL(input.sentBase);
  const base = path.endsWith(suffix)
    ? `${target.origin}${path.slice(0, -suffix.length)}`
    : `${target.origin}${from.pathname.replace(/\/+$/, '')}`;
  return { ok: true, base };
}
