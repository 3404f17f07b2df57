import { describe, expect, it } from 'vitest';
import { baseUrlForDeployment, DEPLOYMENTS, readApiConfig } from '../../../src/api/read-api-config.js';
import { configError } from '../../support/config-error.js';

const noFiles = {
  readFile: (path: string): string => {
    throw Object.assign(new Error(`ENOENT: ${path}`), { code: 'ENOENT' });
  },
};

describe('readApiConfig', () => {
  const base = { SUMOLOGIC_ACCESSID: 'suABC', SUMOLOGIC_ACCESSKEY: 'k3y-secret' };

  it('reads id, key and a deployment', () => {
    expect(readApiConfig({ ...base, SUMOLOGIC_DEPLOYMENT: 'eu' }, noFiles)).toEqual({
      baseUrl: 'https://api.eu.sumologic.com/api/v1',
      accessId: 'suABC',
      accessKey: 'k3y-secret',
    });
  });

  it('maps every deployment, us1 without a prefix', () => {
    expect(baseUrlForDeployment('us1')).toBe('https://api.sumologic.com/api/v1');
    for (const d of DEPLOYMENTS.filter((d) => d !== 'us1'))
      expect(baseUrlForDeployment(d)).toBe(`https://api.${d}.sumologic.com/api/v1`);
    expect(DEPLOYMENTS).toEqual(['us1', 'us2', 'eu', 'au', 'de', 'jp', 'ca', 'in', 'kr', 'fed', 'ch']);
  });

  it('accepts a deployment name in any case', () => {
    expect(readApiConfig({ ...base, SUMOLOGIC_DEPLOYMENT: 'US2' }, noFiles).baseUrl).toBe(
      'https://api.us2.sumologic.com/api/v1',
    );
  });

  it.each([
    ['http://127.0.0.1:8080/api/v1', 'http://127.0.0.1:8080/api/v1'],
    ['http://127.0.0.1:8080/api/v1/', 'http://127.0.0.1:8080/api/v1'],
    ['https://api.au.sumologic.com/api/', 'https://api.au.sumologic.com/api/v1'],
    ['https://api.au.sumologic.com', 'https://api.au.sumologic.com/api/v1'],
  ])('normalises SUMOLOGIC_BASE_URL %s', (raw, want) => {
    expect(readApiConfig({ ...base, SUMOLOGIC_BASE_URL: raw }, noFiles).baseUrl).toBe(want);
  });

  it('reads the key from SUMOLOGIC_ACCESSKEY_FILE, without its newline', () => {
    const files = { readFile: (p: string) => (p === '/run/secrets/key' ? 'from-file\n' : '') };
    const cfg = readApiConfig(
      {
        SUMOLOGIC_ACCESSID: 'suABC',
        SUMOLOGIC_ACCESSKEY_FILE: '/run/secrets/key',
        SUMOLOGIC_DEPLOYMENT: 'us1',
      },
      files,
    );
    expect(cfg.accessKey).toBe('from-file');
  });

  it('reports every problem at once, naming each variable', () => {
    const err = configError(() => readApiConfig({}, noFiles));
    expect(err.code).toBe('FLEET_ERR_CONFIG');
    expect(err.issues.map((i) => i.field)).toEqual([
      'SUMOLOGIC_ACCESSID',
      'SUMOLOGIC_ACCESSKEY',
      'SUMOLOGIC_BASE_URL',
    ]);
    expect(err.message).toMatch(/SUMOLOGIC_ACCESSID is not set/);
  });

  it.each([
    [{ SUMOLOGIC_DEPLOYMENT: 'mars' }, /SUMOLOGIC_DEPLOYMENT 'mars' is not one of us1, us2/],
    [{ SUMOLOGIC_BASE_URL: 'not a url' }, /SUMOLOGIC_BASE_URL 'not a url' is not a URL/],
    [{ SUMOLOGIC_BASE_URL: 'ftp://x/api/v1' }, /SUMOLOGIC_BASE_URL must be an http\(s\) URL/],
    [{ SUMOLOGIC_BASE_URL: 'https://u:p@x/api/v1' }, /SUMOLOGIC_BASE_URL must not carry credentials/],
    [{ SUMOLOGIC_BASE_URL: 'https://x/api/v1?a=1' }, /must not carry a query/],
    [{ SUMOLOGIC_BASE_URL: 'https://x/api/v1', SUMOLOGIC_DEPLOYMENT: 'eu' }, /are both set/],
  ])('refuses %o', (extra, message) => {
    expect(() => readApiConfig({ ...base, ...extra }, noFiles)).toThrow(message);
  });

  it('refuses an access ID that cannot be a basic-auth user', () => {
    expect(() =>
      readApiConfig({ ...base, SUMOLOGIC_ACCESSID: 'a:b', SUMOLOGIC_DEPLOYMENT: 'eu' }, noFiles),
    ).toThrow(/SUMOLOGIC_ACCESSID must not contain a colon/);
  });

  it('refuses both key variables, an unreadable and an empty key file', () => {
    const env = { SUMOLOGIC_ACCESSID: 'suABC', SUMOLOGIC_DEPLOYMENT: 'eu' };
    expect(() =>
      readApiConfig({ ...env, SUMOLOGIC_ACCESSKEY: 'k', SUMOLOGIC_ACCESSKEY_FILE: '/k' }, noFiles),
    ).toThrow(/SUMOLOGIC_ACCESSKEY and SUMOLOGIC_ACCESSKEY_FILE are both set/);
    expect(() => readApiConfig({ ...env, SUMOLOGIC_ACCESSKEY_FILE: '/nope' }, noFiles)).toThrow(
      /SUMOLOGIC_ACCESSKEY_FILE cannot read \/nope \(ENOENT\)/,
    );
    expect(() =>
      readApiConfig({ ...env, SUMOLOGIC_ACCESSKEY_FILE: '/k' }, { readFile: () => ' \n' }),
    ).toThrow(/SUMOLOGIC_ACCESSKEY_FILE \/k is empty/);
  });

  it('refuses SUMOLOGIC_ACCESSID_FILE, which is not read, instead of ignoring it silently', () => {
    const env = { SUMOLOGIC_ACCESSKEY: 'k', SUMOLOGIC_DEPLOYMENT: 'eu' };
    const files = { readFile: () => 'id-from-file\n' };
    expect(() =>
      readApiConfig({ ...env, SUMOLOGIC_ACCESSID: 'suABC', SUMOLOGIC_ACCESSID_FILE: '/id' }, files),
    ).toThrow(/SUMOLOGIC_ACCESSID_FILE is not supported/);
    const err = configError(() => readApiConfig({ ...env, SUMOLOGIC_ACCESSID_FILE: '/id' }, files));
    expect(err.issues.map((i) => i.field)).toContain('SUMOLOGIC_ACCESSID_FILE');
  });

  it('refuses both key variables whatever their spelling of emptiness around the key', () => {
    const env = { SUMOLOGIC_ACCESSID: 'suABC', SUMOLOGIC_DEPLOYMENT: 'eu' };
    const files = { readFile: () => 'from-file\n' };
    expect(() =>
      readApiConfig({ ...env, SUMOLOGIC_ACCESSKEY: ' k ', SUMOLOGIC_ACCESSKEY_FILE: ' /k ' }, files),
    ).toThrow(/both set/);
  });

  it('never puts the access key in a message', () => {
    const err = configError(() =>
      readApiConfig({ SUMOLOGIC_ACCESSKEY: 'k3y-secret', SUMOLOGIC_DEPLOYMENT: 'mars' }, noFiles),
    );
    expect(err.message).not.toContain('k3y-secret');
    expect(JSON.stringify(err.issues)).not.toContain('k3y-secret');
  });
});
