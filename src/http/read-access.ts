/**
 * Resolves the settings file's `access:` (access-settings.ts) into what access-control.ts needs:
 * each person's grant and where their token is (a file read now and again when it changes, or an
 * environment variable read now), the proxy's trusted addresses as a BlockList and its groups'
 * grants. `FLEET_UPGRADE_CONTROL_TOKEN` (or its file) is one more person: the admin named `admin`.
 * A pure function of its inputs; every problem names the file, line and field, none a token.
 */
import { statSync } from 'node:fs';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import type { SourceIssue } from '../lib/errors.js';
import type { Logger } from '../lib/logger.js';
import { formatFieldPath } from '../lib/source/yaml-source.js';
import {
  AccessControl,
  type AccessUserResolved,
  type Grant,
  type TokenFiles,
  tokenProblem,
} from './access-control.js';
import type { AccessSettings, GroupGrant } from './access-settings.js';
import { CONTROL_TOKEN_ADMIN, type ControlToken } from './authorize-request.js';

export interface ReadAccessInput {
  settings: AccessSettings;
  /** The organizations the settings name (a grant's orgs must be among them). */
  orgNames: readonly string[];
  env: Readonly<Record<string, string | undefined>>;
  settingsFile: string;
  readFile: (path: string) => string;
  locate?: (path: readonly PropertyKey[]) => { line: number; column: number } | undefined;
  /** `FLEET_UPGRADE_CONTROL_TOKEN`: the admin `admin`. */
  controlToken?: ControlToken;
}

/** What `createAccess` needs once the settings are checked. */
export interface AccessPlan {
  users: AccessUserResolved[];
  proxy?: { userHeader: string; groupsHeader?: string; trusted: BlockList; groups: Map<string, Grant> };
}

const grantOf = (g: GroupGrant): Grant =>
  typeof g === 'string' ? { role: g } : { role: g.role, ...(g.orgs ? { orgs: g.orgs } : {}) };

export function readAccess(input: ReadAccessInput): { plan: AccessPlan; issues: SourceIssue[] } {
  const issues: SourceIssue[] = [];
  const problem = (path: (string | number)[], reason: string) => {
    const full = ['access', ...path];
    const pos = input.locate?.(full);
    issues.push({
      file: input.settingsFile,
      line: pos?.line,
      column: pos?.column,
      field: formatFieldPath(full),
      reason,
    });
  };
  const checkOrgs = (path: (string | number)[], orgs: readonly string[] | undefined) => {
    for (const org of orgs ?? [])
      if (!input.orgNames.includes(org))
        problem(path, `the settings name no organization '${org}' (they name ${input.orgNames.join(', ')})`);
  };
  const users: AccessUserResolved[] = [];
  const names = new Set<string>();
  (input.settings.users ?? []).forEach((u, i) => {
    if (names.has(u.name) || (u.name === 'admin' && input.controlToken))
      problem(
        [i, 'name'],
        `'${u.name}' is the name of ${u.name === 'admin' ? 'the control token’s admin' : 'an earlier user'}`,
      );
    names.add(u.name);
    checkOrgs(['users', i, 'orgs'], u.orgs);
    const grant: Grant = { role: u.role, ...(u.orgs ? { orgs: u.orgs } : {}) };
    if (u.tokenFile && u.tokenEnv)
      problem(['users', i, 'tokenFile'], 'and tokenEnv are both set; set only one of them');
    let token: AccessUserResolved['token'];
    if (u.tokenEnv) {
      const value = input.env[u.tokenEnv];
      const why = value === undefined ? `the variable ${u.tokenEnv} is not set` : tokenProblem(value);
      if (why)
        problem(['users', i, 'tokenEnv'], value === undefined ? why : `${u.tokenEnv}: the token ${why}`);
      else token = { kind: 'value', value: value as string };
    } else if (u.tokenFile) {
      let text: string | undefined;
      try {
        text = input.readFile(u.tokenFile);
      } catch (err) {
        problem(
          [i, 'tokenFile'],
          `cannot read ${u.tokenFile} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
        );
      }
      const why = text === undefined ? undefined : tokenProblem(text);
      if (why) problem(['users', i, 'tokenFile'], `${u.tokenFile}: the token ${why}`);
      if (text !== undefined && !why) token = { kind: 'file', path: u.tokenFile };
    } else if (!input.settings.proxy) {
      problem(['users', i], 'needs tokenFile or tokenEnv (or access.proxy, to come only through the proxy)');
    }
    users.push({ name: u.name, grant, ...(token ? { token } : {}) });
  });
  if (input.controlToken)
    users.push({
      name: CONTROL_TOKEN_ADMIN,
      grant: { role: 'admin' },
      token: { kind: 'control', token: input.controlToken },
    });
  const plan: AccessPlan = { users };
  const p = input.settings.proxy;
  if (p) {
    const trusted = new BlockList();
    p.trustedAddresses.forEach((cidr, i) => {
      const [address = '', bits] = cidr.split('/');
      const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
      const prefix = bits === undefined ? (family === 'ipv4' ? 32 : 128) : Number(bits);
      if (!family || !Number.isInteger(prefix) || prefix < 0 || prefix > (family === 'ipv4' ? 32 : 128))
        problem(
          ['proxy', 'trustedAddresses', i],
          `expected an address or a CIDR like 10.0.0.0/8 or fd00::/8; got ${JSON.stringify(cidr)}`,
        );
      else trusted.addSubnet(address, prefix, family);
    });
    const groups = new Map<string, Grant>();
    for (const [name, g] of Object.entries(p.groups ?? {})) {
      const grant = grantOf(g);
      checkOrgs(['proxy', 'groups', name, 'orgs'], grant.orgs);
      groups.set(name, grant);
    }
    plan.proxy = {
      userHeader: p.userHeader,
      ...(p.groupsHeader ? { groupsHeader: p.groupsHeader } : {}),
      trusted,
      groups,
    };
  }
  return { plan, issues };
}

/** Token files on disk: their text, and their version (mtime and size) to notice a change. */
export const DISK_TOKEN_FILES = (readFile: (path: string) => string): TokenFiles => ({
  read: readFile,
  version(path) {
    try {
      const s = statSync(path);
      return `${s.mtimeMs}:${s.size}:${s.ino}`;
    } catch {
      return undefined;
    }
  },
});

/** The access control of a checked plan. */
export function createAccess(plan: AccessPlan, files: TokenFiles, logger: Logger): AccessControl {
  return new AccessControl(plan.users, plan.proxy, files, logger);
}
