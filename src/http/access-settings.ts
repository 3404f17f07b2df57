/**
 * The settings file's `access:` (docs/access.md): named people with a role and, optionally, the
 * organizations they may act on, each proving who they are with a bearer token read from a file
 * or an environment variable (never written here: `token:` is refused), and optionally an
 * authenticating proxy (oauth2-proxy, Pomerium) whose headers name the person, believed only
 * from the proxy's addresses. Parsed with zod by daemon-config.ts; resolved by read-access.ts.
 */
import { z } from 'zod';

/** viewer: every read; operator: the actions on rollouts in scope; admin: everything. */
export const ROLES = ['viewer', 'operator', 'admin'] as const;
export type Role = (typeof ROLES)[number];

/** A person's name, as history, audit, webhooks and status show it. */
export const USER_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$/;

const orgList = z.array(z.string().min(1)).min(1, 'name at least one organization (or leave orgs out)');

export const AccessUser = z.strictObject({
  /** Shown in history, audit, webhooks and status. Required; unique. */
  name: z.string().regex(USER_NAME_PATTERN, 'expected a name of letters, digits, ., _, @ or - (at most 64)'),
  /** A file that holds the person's token (a mounted secret); or `tokenEnv`. */
  tokenFile: z.string().min(1).optional(),
  /** An environment variable that holds the person's token; or `tokenFile`. */
  tokenEnv: z.string().min(1).optional(),
  /** Refused: a token written here would leak with the file. */
  token: z
    .never({
      error: 'an inline token is refused: name a file (tokenFile) or a variable (tokenEnv) that holds it',
    })
    .optional(),
  role: z.enum(ROLES),
  /** The organizations this person may act on. Default: all. */
  orgs: orgList.optional(),
});
export type AccessUser = z.infer<typeof AccessUser>;

const GroupGrant = z.union([
  z.enum(ROLES),
  z.strictObject({ role: z.enum(ROLES), orgs: orgList.optional() }),
]);
export type GroupGrant = z.infer<typeof GroupGrant>;

export const AccessProxy = z.strictObject({
  /** The header that names the person (oauth2-proxy: `X-Forwarded-User`). Required. */
  userHeader: z.string().regex(/^[A-Za-z0-9-]+$/, 'expected a header name'),
  /** The header that lists the person's groups, comma-separated (`X-Forwarded-Groups`). Default none. */
  groupsHeader: z
    .string()
    .regex(/^[A-Za-z0-9-]+$/, 'expected a header name')
    .optional(),
  /** The proxy's addresses, as CIDRs: the headers are believed only from these peers. Required. */
  trustedAddresses: z.array(z.string().min(1)).min(1, 'name at least one address of the proxy'),
  /** Group → role (or `{ role, orgs }`). A person's grants are the union of their groups'. Default none. */
  groups: z.record(z.string().min(1), GroupGrant).optional(),
});
export type AccessProxy = z.infer<typeof AccessProxy>;

export const AccessSettings = z.strictObject({
  users: z.array(AccessUser).max(1000, 'at most 1000 users').optional(),
  proxy: AccessProxy.optional(),
});
export type AccessSettings = z.infer<typeof AccessSettings>;

/** The audit trail's bounds (`audit:` in the settings file). */
export const AuditSettings = z.strictObject({
  /** How long records are kept (a duration, 1d to 3650d). Default 400d. */
  retention: z.string().optional(),
  /** The most records kept; the oldest are dropped past it, and counted. 1,000 to 100,000,000. Default 1,000,000. */
  maxRecords: z.number().int().min(1000).max(100_000_000).optional(),
});
export type AuditSettings = z.infer<typeof AuditSettings>;
