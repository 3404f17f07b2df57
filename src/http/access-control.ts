/**
 * Who is calling, once `access:` is set (access-settings.ts, resolved by read-access.ts): a named
 * person with their grants (a role, and the organizations it covers), or nobody (401).
 *
 * - `Authorization: Bearer <token>`: the token is compared with every person's in constant time,
 *   over SHA-256 digests (the tokens are kept only as digests; every person's is compared, so the
 *   time says nothing of which one matched). A person's token file is read again when it changes
 *   (its mtime and size, looked at most once a second): a rotated secret takes effect without a
 *   restart, and a removed one stops working.
 * - No token, an authenticating proxy configured, and the peer one of its `trustedAddresses`: the
 *   proxy's `userHeader` names the person and its `groupsHeader` their groups, whose grants
 *   (`groups`) are the person's, with those of a `users` entry of the same name. From any other
 *   peer those headers are ignored (anyone can send them).
 *
 * Nothing of a token is logged, kept in clear, or repeated in an error.
 */
import { createHash, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { type BlockList, isIPv4, isIPv6 } from 'node:net';
import type { Logger } from '../lib/logger.js';
import { ROLES, type Role } from './access-settings.js';
import type { ControlToken } from './authorize-request.js';
import { echo, HttpError } from './http-error.js';

/** A role over some organizations (`orgs` undefined: all of them). */
export interface Grant {
  role: Role;
  orgs?: readonly string[];
}

/** A caller known by name. */
export interface Identity {
  name: string;
  /** The highest role of the grants (for display). */
  role: Role;
  grants: readonly Grant[];
  via: 'token' | 'proxy' | 'loopback';
  /** The peer's address. */
  from: string;
  /** The proxy's address, when the person came through one. */
  proxy?: string;
  /** The groups the proxy named (`from:` of an approval may name one). */
  groups?: readonly string[];
}

/** Where a person's token is read from. */
export type TokenSource =
  | { kind: 'file'; path: string }
  | { kind: 'value'; value: string }
  /** `FLEET_UPGRADE_CONTROL_TOKEN`: the one admin named `admin`. */
  | { kind: 'control'; token: ControlToken };

export interface AccessUserResolved {
  name: string;
  grant: Grant;
  /** Undefined: the person comes only through the proxy. */
  token?: TokenSource;
}

export interface AccessProxyResolved {
  userHeader: string;
  groupsHeader?: string;
  trusted: BlockList;
  groups: ReadonlyMap<string, Grant>;
}

/** Reads a token file's text and its version (mtime + size). */
export interface TokenFiles {
  read(path: string): string;
  version(path: string): string | undefined;
}

const digest = (text: string) => createHash('sha256').update(text, 'utf8').digest();
const rank = (role: Role) => ROLES.indexOf(role);
const CHALLENGE = 'Bearer realm="fleet-upgrade"';
const RECHECK_MS = 1000;
const MIN_TOKEN_LENGTH = 16;

interface Held {
  user: AccessUserResolved;
  digest?: Buffer;
  version?: string;
}

/** Whether `address` (v4, v6, or v4-mapped v6) is in `list`. */
export function inBlockList(list: BlockList, address: string | undefined): boolean {
  if (!address) return false;
  const v4 = address.startsWith('::ffff:') ? address.slice(7) : address;
  if (isIPv4(v4)) return list.check(v4, 'ipv4');
  return isIPv6(address) && list.check(address, 'ipv6');
}

/** A person's token as it must be: one word of printable ASCII, 16 characters or more. */
export function tokenProblem(text: string): string | undefined {
  const token = text.trim();
  if (!token) return 'is empty';
  if (!/^[\x21-\x7e]+$/.test(token))
    return 'must be one word of printable ASCII (it is sent in an HTTP header)';
  if (token.length < MIN_TOKEN_LENGTH)
    return `is shorter than ${MIN_TOKEN_LENGTH} characters; make one with: openssl rand -hex 32`;
  return undefined;
}

export class AccessControl {
  readonly #held: Held[];
  #checkedAt = Number.NEGATIVE_INFINITY;

  constructor(
    users: readonly AccessUserResolved[],
    readonly proxy: AccessProxyResolved | undefined,
    private readonly files: TokenFiles,
    private readonly logger: Logger,
    private readonly now: () => number = Date.now,
  ) {
    this.#held = users.map((user) => ({ user }));
    this.#reload(true);
  }

  /** The people known by name (for `from:` of approvals and the docs' checks). */
  get userNames(): string[] {
    return this.#held.map((h) => h.user.name);
  }

  /** Re-reads the token files that changed (at most once a second unless `force`). */
  #reload(force = false): void {
    const now = this.now();
    if (!force && now - this.#checkedAt < RECHECK_MS) return;
    this.#checkedAt = now;
    for (const h of this.#held) {
      const source = h.user.token;
      if (!source || source.kind === 'control') continue;
      if (source.kind === 'value') {
        if (!h.digest) h.digest = digest(source.value.trim());
        continue;
      }
      const version = this.files.version(source.path);
      if (version === h.version && !force) continue;
      h.version = version;
      let text: string | undefined;
      try {
        text = version === undefined ? undefined : this.files.read(source.path);
      } catch {
        text = undefined;
      }
      const problem = text === undefined ? 'cannot be read' : tokenProblem(text);
      if (problem) {
        if (h.digest || force)
          this.logger.warn(
            { user: h.user.name, file: source.path, problem },
            'access token file unusable: this person cannot sign in until it is fixed',
          );
        h.digest = undefined;
      } else {
        if (h.digest && !force)
          this.logger.info({ user: h.user.name, file: source.path }, 'access token reloaded');
        h.digest = digest((text as string).trim());
      }
    }
  }

  /** The person a bearer token belongs to; every person's digest is compared. */
  #byToken(candidate: string): AccessUserResolved | undefined {
    this.#reload();
    const sent = digest(candidate);
    let found: AccessUserResolved | undefined;
    for (const h of this.#held) {
      const source = h.user.token;
      const match =
        source?.kind === 'control'
          ? source.token.matches(candidate)
          : h.digest !== undefined && timingSafeEqual(sent, h.digest);
      if (match && !found) found = h.user;
    }
    return found;
  }

  /** The caller, or the 401 HttpError that refuses them. */
  identify(req: IncomingMessage): Identity | HttpError {
    const from = req.socket.remoteAddress ?? 'unknown';
    const header = req.headers.authorization;
    if (header !== undefined) {
      const m = /^Bearer[ \t]+(\S+)[ \t]*$/i.exec(header);
      if (!m)
        return new HttpError('unauthorized', 'the Authorization header must be: Bearer <token>', {
          'www-authenticate': CHALLENGE,
        });
      const user = this.#byToken(m[1] as string);
      if (!user)
        return new HttpError('unauthorized', 'the bearer token is not the token of anyone in access.users', {
          'www-authenticate': `${CHALLENGE}, error="invalid_token"`,
        });
      return { name: user.name, role: user.grant.role, grants: [user.grant], via: 'token', from };
    }
    const proxy = this.proxy;
    if (proxy && inBlockList(proxy.trusted, req.socket.remoteAddress)) {
      const raw = req.headers[proxy.userHeader.toLowerCase()];
      const name = typeof raw === 'string' ? raw.trim() : '';
      if (name) return this.#fromProxy(req, proxy, name, from);
    }
    return new HttpError(
      'unauthorized',
      proxy
        ? `this endpoint needs Authorization: Bearer <token>, or the proxy's ${proxy.userHeader} from one of its trusted addresses`
        : 'this endpoint needs the header Authorization: Bearer <token>',
      { 'www-authenticate': CHALLENGE },
    );
  }

  #fromProxy(
    req: IncomingMessage,
    proxy: AccessProxyResolved,
    name: string,
    from: string,
  ): Identity | HttpError {
    if (name.length > 256)
      return new HttpError('unauthorized', `the proxy's ${proxy.userHeader} is longer than 256 characters`);
    const rawGroups = proxy.groupsHeader ? req.headers[proxy.groupsHeader.toLowerCase()] : undefined;
    const groups = (typeof rawGroups === 'string' ? rawGroups.split(',') : [])
      .map((g) => g.trim())
      .filter(Boolean)
      .slice(0, 256);
    const grants: Grant[] = [];
    for (const g of groups) {
      const grant = proxy.groups.get(g);
      if (grant) grants.push(grant);
    }
    const known = this.#held.find((h) => h.user.name === name);
    if (known) grants.push(known.user.grant);
    const role = grants.reduce<Role | undefined>(
      (best, g) => (best === undefined || rank(g.role) > rank(best) ? g.role : best),
      undefined,
    );
    if (!role)
      return new HttpError(
        'forbidden',
        `${echo(name)} (through the proxy) has no role: none of their groups (${echo(groups.join(', ') || 'none')}) is in access.proxy.groups`,
      );
    const forwarded = req.headers['x-forwarded-for'];
    const client = (typeof forwarded === 'string' ? forwarded.split(',')[0]?.trim() : '') || from;
    return { name, role, grants, via: 'proxy', from: echo(client), proxy: from, groups };
  }
}

/** Whether some grant of `who` gives `role` over `org` (undefined: over every organization). */
function covers(who: Identity, role: Role, org: string | undefined): boolean {
  return who.grants.some(
    (g) =>
      rank(g.role) >= rank(role) && (g.orgs === undefined || (org !== undefined && g.orgs.includes(org))),
  );
}

/** Throws the 403 that names the missing role unless some grant of `who` has `role` (any scope). */
export function requireRole(who: Identity, role: Role, what: string): void {
  if (!who.grants.some((g) => rank(g.role) >= rank(role)))
    throw new HttpError('forbidden', `${who.name} is ${article(who.role)}: ${what} needs the role ${role}`);
}

/**
 * Throws the 403 that names what is missing unless `who` has `role` over every one of `orgs`
 * (none named: over all of them). `what` is the action, for the message.
 */
export function requireGrant(who: Identity, role: Role, what: string, orgs?: readonly string[]): void {
  requireRole(who, role, what);
  if (orgs === undefined) {
    if (!covers(who, role, undefined))
      throw new HttpError(
        'forbidden',
        `${who.name} may ${what} only in ${scopeOf(who, role)}: ${what} here needs every organization`,
      );
    return;
  }
  const missing = orgs.filter((o) => !covers(who, role, o));
  if (missing.length)
    throw new HttpError(
      'forbidden',
      `${who.name} may ${what} only in ${scopeOf(who, role)}: missing the organization${missing.length === 1 ? '' : 's'} ${missing.join(', ')}${orgs.length > 1 ? ` (an action on a rollout of ${orgs.join(', ')} without org needs all of them)` : ''}`,
    );
}

const article = (role: Role) => (role === 'admin' || role === 'operator' ? `an ${role}` : `a ${role}`);

function scopeOf(who: Identity, role: Role): string {
  const orgs = new Set(who.grants.filter((g) => rank(g.role) >= rank(role)).flatMap((g) => g.orgs ?? []));
  return [...orgs].join(', ') || 'no organization';
}

/**
 * The organizations whose rollouts `who` may read (docs/access.md): undefined when some grant
 * covers every organization (or no person is known: no `access:`), else those of the grants.
 */
export function readableOrgs(who: Identity | undefined): readonly string[] | undefined {
  if (!who || who.grants.some((g) => g.orgs === undefined)) return undefined;
  return [...new Set(who.grants.flatMap((g) => g.orgs ?? []))];
}
