/**
 * Who may use the control endpoints (src/http/authorize-request.ts), as a pure decision: with a
 * token every caller needs it (loopback included), compared in constant time; without one only
 * loopback callers asking for a loopback host, with a 403 that says why. Non-loopback callers
 * cannot reach a test's server, so their refusal is tested here.
 */
import { inspect } from 'node:util';
import { describe, expect, it } from 'vitest';
import {
  type AuthorizeInput,
  authorizeRequest,
  ControlToken,
  isLoopbackAddress,
  isLoopbackHost,
} from '../../../src/http/authorize-request.js';

const SECRET = 'c0ntrol-token-0123456789abcdef';
const token = new ControlToken(SECRET);

const decide = (input: Partial<AuthorizeInput>) =>
  authorizeRequest({
    token: undefined,
    authorization: undefined,
    host: '127.0.0.1:9464',
    remoteAddress: '127.0.0.1',
    ...input,
  });

describe('authorizeRequest with a token configured', () => {
  it('accepts the token from any caller and names its holder admin (issue #28), never the token', () => {
    for (const remoteAddress of ['10.1.2.3', '127.0.0.1', '2001:db8::7']) {
      const d = decide({
        token,
        authorization: `Bearer ${SECRET}`,
        remoteAddress,
        host: 'fleet.example:9464',
      });
      expect(d).toEqual({ ok: true, actor: 'admin' });
    }
    // The scheme is case-insensitive (RFC 9110); white space after the token is tolerated.
    expect(decide({ token, authorization: `bearer ${SECRET}  ` }).ok).toBe(true);
  });

  it('refuses a missing, malformed or wrong token with 401 and a challenge, loopback callers too', () => {
    const cases: [string | undefined, RegExp][] = [
      [undefined, /needs the header Authorization: Bearer <token>/],
      ['', /needs the header/],
      [`Basic ${Buffer.from(`u:${SECRET}`).toString('base64')}`, /needs the header/],
      [SECRET, /needs the header/],
      ['Bearer', /needs the header/],
      [`Bearer ${SECRET} extra`, /needs the header/],
      [`Bearer ${SECRET}x`, /is not the control token/],
      [`Bearer ${SECRET.slice(0, -1)}`, /is not the control token/],
      ['Bearer x', /is not the control token/],
    ];
    for (const [authorization, message] of cases) {
      const d = decide({ token, authorization });
      expect(d.ok).toBe(false);
      if (d.ok) continue;
      expect(d.error).toMatchObject({ code: 'unauthorized', status: 401 });
      expect(d.error.message).toMatch(message);
      expect(d.error.message).not.toContain(SECRET.slice(4));
      expect(d.error.headers['www-authenticate']).toMatch(/^Bearer realm="fleet-upgrade"/);
    }
  });

  it('keeps the token out of JSON, strings and inspection', () => {
    expect(JSON.stringify({ token })).toBe('{"token":"[redacted]"}');
    expect(String(token)).toBe('[redacted]');
    expect(inspect({ token })).not.toContain(SECRET);
    expect(token.matches(SECRET)).toBe(true);
    expect(token.matches(`${SECRET} `)).toBe(false);
  });
});

describe('authorizeRequest without a token', () => {
  it('accepts loopback callers asking for a loopback host', () => {
    for (const [remoteAddress, host] of [
      ['127.0.0.1', '127.0.0.1:9464'],
      ['::1', '[::1]:9464'],
      ['::ffff:127.0.0.1', 'localhost:9464'],
      ['127.0.0.1', 'LOCALHOST'],
      ['127.0.0.1', undefined],
    ] as const) {
      expect(decide({ remoteAddress, host })).toEqual({ ok: true, actor: `http:${remoteAddress}` });
    }
  });

  it('refuses every other caller with 403, saying that only loopback is served and how to set a token', () => {
    for (const remoteAddress of [
      '10.0.0.5',
      '192.168.1.20',
      '::ffff:10.0.0.5',
      '2001:db8::1',
      '::',
      undefined,
    ]) {
      const d = decide({ remoteAddress });
      expect(d.ok).toBe(false);
      if (d.ok) continue;
      expect(d.error).toMatchObject({ code: 'forbidden', status: 403 });
      expect(d.error.message).toContain('no control token is configured');
      expect(d.error.message).toContain('FLEET_UPGRADE_CONTROL_TOKEN');
      expect(d.error.message).toContain('only to loopback callers');
    }
    // A token sent anyway does not open the door.
    expect(decide({ remoteAddress: '10.0.0.5', authorization: `Bearer ${SECRET}` }).ok).toBe(false);
  });

  it('refuses a loopback caller asking for another host (a DNS-rebinding page in a browser)', () => {
    const d = decide({ remoteAddress: '127.0.0.1', host: 'evil.example:9464' });
    expect(d.ok).toBe(false);
    if (!d.ok) {
      expect(d.error.code).toBe('forbidden');
      expect(d.error.message).toContain('evil.example:9464');
    }
  });
});

describe('isLoopbackAddress, isLoopbackHost', () => {
  it('knows the loopback addresses and names', () => {
    for (const a of ['127.0.0.1', '127.3.2.1', '::1', '::ffff:127.0.0.1'])
      expect(isLoopbackAddress(a)).toBe(true);
    for (const a of [
      '10.0.0.1',
      '::ffff:10.0.0.1',
      '0.0.0.0',
      '::',
      '1127.0.0.1',
      '127.0.0.1.evil',
      '',
      undefined,
    ])
      expect(isLoopbackAddress(a)).toBe(false);
    for (const h of ['localhost', 'localhost:80', 'localhost.', '127.0.0.1:1', '[::1]:9464', '[::1]'])
      expect(isLoopbackHost(h)).toBe(true);
    for (const h of ['example.com', 'localhost.example.com', '[2001:db8::1]:80', '127.0.0.1.nip.io', ''])
      expect(isLoopbackHost(h)).toBe(false);
  });
});
