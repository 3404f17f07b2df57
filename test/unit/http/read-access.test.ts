/**
 * `access:` in the settings file (src/http/read-access.ts through loadDaemonConfig): a token
 * written in the file is refused with its file:line; a person needs one token source; an
 * organization of a grant must be one of the settings'; a proxy's trusted address must be a CIDR;
 * no message repeats a token. Then the access control made of it (access-control.ts): tokens by
 * digest, a changed token file read again, the proxy believed only from its addresses.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { AccessControl, requireGrant } from '../../../src/http/access-control.js';
import { HttpError } from '../../../src/http/http-error.js';
import { ConfigError } from '../../../src/lib/errors.js';
import { captureLogger } from '../../support/capture-logger.js';

const TOKEN = 'alice-token-0123456789abcdef';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function settings(text: string, env: NodeJS.ProcessEnv = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'read-access-'));
  dirs.push(dir);
  writeFileSync(join(dir, 'alice'), `${TOKEN}\n`);
  const file = join(dir, 'settings.yaml');
  writeFileSync(file, text.replaceAll('DIR', dir));
  return {
    dir,
    load: () => loadDaemonConfig({ env, flags: { config: file }, needApi: false, needControl: true }),
  };
}

function errorOf(run: () => unknown): string {
  try {
    run();
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
  throw new Error('no error');
}

const req = (headers: Record<string, string>, address = '127.0.0.1') =>
  ({ headers, socket: { remoteAddress: address } }) as unknown as IncomingMessage;

describe('access settings', () => {
  it('refuses a token written in the settings file, naming its line, without repeating it', () => {
    const s = settings(
      [
        'orgs:',
        '  - { name: emea, deployment: eu, accessId: a, accessKeyEnv: K }',
        'access:',
        '  users:',
        '    - name: alice',
        `      token: ${TOKEN}`,
        '      role: admin',
      ].join('\n'),
    );
    const message = errorOf(s.load);
    expect(message).toMatch(
      /settings\.yaml:6:\d+: access\.users\[0\]\.token: an inline token is refused: name a file \(tokenFile\) or a variable \(tokenEnv\)/,
    );
    expect(message).not.toContain(TOKEN);
  });

  it('names each problem with its field: both sources, none, an unknown organization, a bad CIDR, a short token', () => {
    const s = settings(
      [
        'orgs:',
        '  - { name: emea, deployment: eu, accessId: a, accessKeyEnv: K }',
        'access:',
        '  users:',
        '    - { name: alice, tokenFile: DIR/alice, tokenEnv: ALICE, role: admin }',
        '    - { name: bob, role: viewer }',
        '    - { name: carol, tokenEnv: CAROL, role: operator, orgs: [apac] }',
      ].join('\n'),
      { ALICE: TOKEN, CAROL: 'tiny-tkn' },
    );
    const message = errorOf(s.load);
    expect(message).toMatch(/access\.users\[0\]\.tokenFile: and tokenEnv are both set/);
    expect(message).toMatch(/access\.users\[1\]: needs tokenFile or tokenEnv/);
    expect(message).toMatch(
      /access\.users\[2\]\.orgs: the settings name no organization 'apac' \(they name emea\)/,
    );
    expect(message).toMatch(/access\.users\[2\]\.tokenEnv: CAROL: the token is shorter than 16 characters/);
    expect(message).not.toContain('tiny-tkn');
    const proxy = settings(
      ['access:', '  proxy:', '    userHeader: X-Forwarded-User', '    trustedAddresses: [10.0.0.0/33]'].join(
        '\n',
      ),
    );
    expect(errorOf(proxy.load)).toMatch(
      /access\.proxy\.trustedAddresses\[0\]: expected an address or a CIDR/,
    );
  });

  it('identifies by token (constant time, every digest), reads a changed file again, believes the proxy only from its addresses', () => {
    const s = settings(
      [
        'access:',
        '  users:',
        '    - { name: alice, tokenFile: DIR/alice, role: operator, orgs: [default] }',
        '  proxy:',
        '    userHeader: X-Forwarded-User',
        '    groupsHeader: X-Forwarded-Groups',
        '    trustedAddresses: [10.1.0.0/16]',
        '    groups: { sre: admin }',
      ].join('\n'),
    );
    const config = s.load();
    let version = 'v1';
    let text = `${TOKEN}\n`;
    const log = captureLogger();
    let now = 0;
    const access = new AccessControl(
      config.access?.users ?? [],
      config.access?.proxy,
      { read: () => text, version: () => version },
      log.logger,
      () => now,
    );
    const alice = access.identify(req({ authorization: `Bearer ${TOKEN}` }));
    expect(alice).toMatchObject({ name: 'alice', role: 'operator', via: 'token' });
    expect(() => requireGrant(alice as never, 'operator', 'pause', ['default'])).not.toThrow();
    expect(() => requireGrant(alice as never, 'admin', 'forget')).toThrow(
      'alice is an operator: forget needs the role admin',
    );
    expect(access.identify(req({ authorization: 'Bearer nobody-0123456789abcdef' }))).toBeInstanceOf(
      HttpError,
    );
    // Rotated: the old token stops once the change is seen (at most a second later).
    text = 'alice-rotated-0123456789abcdef';
    version = 'v2';
    now = 1500;
    expect(access.identify(req({ authorization: `Bearer ${TOKEN}` }))).toBeInstanceOf(HttpError);
    expect(access.identify(req({ authorization: 'Bearer alice-rotated-0123456789abcdef' }))).toMatchObject({
      name: 'alice',
    });
    // The proxy: from 10.1.x only.
    const headers = { 'x-forwarded-user': 'pat', 'x-forwarded-groups': 'sre' };
    expect(access.identify(req(headers, '10.1.2.3'))).toMatchObject({
      name: 'pat',
      role: 'admin',
      via: 'proxy',
      proxy: '10.1.2.3',
    });
    expect(access.identify(req(headers, '::ffff:10.1.2.3'))).toMatchObject({ name: 'pat' });
    expect(access.identify(req(headers, '10.2.0.1'))).toBeInstanceOf(HttpError);
    const none = access.identify(
      req({ 'x-forwarded-user': 'pat', 'x-forwarded-groups': 'visitors' }, '10.1.2.3'),
    );
    expect((none as HttpError).status).toBe(403);
    expect(log.text()).not.toContain(TOKEN);
  });
});
