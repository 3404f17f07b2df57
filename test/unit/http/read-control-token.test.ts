/**
 * The HTTP control token and `authReads` in the settings (src/http/read-control-token.ts through
 * loadDaemonConfig): from FLEET_UPGRADE_CONTROL_TOKEN, FLEET_UPGRADE_CONTROL_TOKEN_FILE or the
 * file's `controlTokenFile`; an inline `controlToken:` refused with file:line:field; both
 * variables set refused; short or multi-word tokens refused; no message repeats the token.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type LoadDaemonConfigInput, loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { ControlToken } from '../../../src/http/authorize-request.js';
import type { ConfigError } from '../../../src/lib/errors.js';
import { configError as anyConfigError } from '../../support/config-error.js';

const TOKEN = 'a3f1c9e07b5d42e8a3f1c9e07b5d42e8';
const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), 'control-token-'));
  dirs.push(d);
  return d;
}

function load(env: NodeJS.ProcessEnv, extra: Partial<LoadDaemonConfigInput> = {}) {
  return loadDaemonConfig({
    env,
    flags: {},
    needApi: false,
    needControl: true,
    fileExists: () => false,
    ...extra,
  });
}

/** The ConfigError of `run`, which must not quote the token. */
function configError(run: () => unknown): ConfigError {
  const err = anyConfigError(run);
  expect(err.message).not.toContain(TOKEN.slice(2, -2));
  return err;
}

describe('the control token', () => {
  it('is unset by default: control endpoints then answer only to loopback callers', () => {
    expect(load({}).controlToken).toBeUndefined();
  });

  it('comes from FLEET_UPGRADE_CONTROL_TOKEN, white space around it dropped', () => {
    const token = load({ FLEET_UPGRADE_CONTROL_TOKEN: ` ${TOKEN}\n` }).controlToken;
    expect(token).toBeInstanceOf(ControlToken);
    expect(token?.matches(TOKEN)).toBe(true);
    expect(JSON.stringify(load({ FLEET_UPGRADE_CONTROL_TOKEN: TOKEN }))).not.toContain(TOKEN);
  });

  it('comes from FLEET_UPGRADE_CONTROL_TOKEN_FILE, or the settings file’s controlTokenFile (the variable wins)', () => {
    const dir = tempDir();
    const envFile = join(dir, 'env-token');
    const fileFile = join(dir, 'file-token');
    writeFileSync(envFile, `${TOKEN}\n`);
    writeFileSync(fileFile, `${TOKEN}-file\n`);
    const settings = join(dir, 'fleet-upgrade.yaml');
    writeFileSync(settings, `controlTokenFile: ${fileFile}\n`);
    expect(load({ FLEET_UPGRADE_CONTROL_TOKEN_FILE: envFile }).controlToken?.matches(TOKEN)).toBe(true);
    const fromFile = load({ FLEET_UPGRADE_CONFIG: settings }).controlToken;
    expect(fromFile?.matches(`${TOKEN}-file`)).toBe(true);
    expect(
      load({
        FLEET_UPGRADE_CONFIG: settings,
        FLEET_UPGRADE_CONTROL_TOKEN_FILE: envFile,
      }).controlToken?.matches(TOKEN),
    ).toBe(true);
    expect(
      load({ FLEET_UPGRADE_CONFIG: settings, FLEET_UPGRADE_CONTROL_TOKEN: TOKEN }).controlToken?.matches(
        TOKEN,
      ),
    ).toBe(true);
    // Not read unless asked (workers, status, the operator commands).
    expect(load({ FLEET_UPGRADE_CONFIG: settings }, { needControl: false }).controlToken).toBeUndefined();
  });

  it('refuses an inline controlToken in the settings file with file:line:field', () => {
    const dir = tempDir();
    const settings = join(dir, 'fleet-upgrade.yaml');
    writeFileSync(settings, `keyPrefix: ops\ncontrolToken: ${TOKEN}\n`);
    const err = configError(() => load({ FLEET_UPGRADE_CONFIG: settings }));
    expect(err.message).toContain(`${settings}:2:`);
    expect(err.message).toContain('controlToken');
    expect(err.message).toContain(
      'an inline token is refused: name a file that holds it (controlTokenFile: PATH)',
    );
  });

  it('refuses both variables at once, an unreadable or empty file, and a short or multi-word token', () => {
    const dir = tempDir();
    const file = join(dir, 'token');
    writeFileSync(file, TOKEN);
    expect(
      configError(() => load({ FLEET_UPGRADE_CONTROL_TOKEN: TOKEN, FLEET_UPGRADE_CONTROL_TOKEN_FILE: file }))
        .message,
    ).toBe(
      'environment: FLEET_UPGRADE_CONTROL_TOKEN: and FLEET_UPGRADE_CONTROL_TOKEN_FILE are both set; set only one of them',
    );
    const missing = join(dir, 'missing');
    expect(configError(() => load({ FLEET_UPGRADE_CONTROL_TOKEN_FILE: missing })).message).toBe(
      `environment: FLEET_UPGRADE_CONTROL_TOKEN_FILE: cannot read ${missing} (ENOENT)`,
    );
    const empty = join(dir, 'empty');
    writeFileSync(empty, '\n');
    expect(configError(() => load({ FLEET_UPGRADE_CONTROL_TOKEN_FILE: empty })).message).toContain(
      `${empty} is empty`,
    );
    expect(configError(() => load({ FLEET_UPGRADE_CONTROL_TOKEN: 'short' })).message).toBe(
      'environment: FLEET_UPGRADE_CONTROL_TOKEN: the token is shorter than 16 characters; make one with: openssl rand -hex 32',
    );
    const twoWords = join(dir, 'two');
    writeFileSync(twoWords, `${TOKEN}\n${TOKEN}\n`);
    expect(configError(() => load({ FLEET_UPGRADE_CONTROL_TOKEN_FILE: twoWords })).message).toContain(
      'must be one word of printable ASCII',
    );
    // The settings file's field is located.
    const settings = join(dir, 'fleet-upgrade.yaml');
    writeFileSync(settings, `keyPrefix: ops\ncontrolTokenFile: ${missing}\n`);
    expect(configError(() => load({ FLEET_UPGRADE_CONFIG: settings })).message).toBe(
      `${settings}:2:1: controlTokenFile: cannot read ${missing} (ENOENT)`,
    );
  });
});

describe('authReads', () => {
  it('is off by default; file < FLEET_UPGRADE_AUTH_READS < --auth-reads', () => {
    const dir = tempDir();
    const settings = join(dir, 'fleet-upgrade.yaml');
    writeFileSync(settings, 'authReads: true\n');
    expect(load({}).authReads).toBe(false);
    expect(load({ FLEET_UPGRADE_CONFIG: settings }).authReads).toBe(true);
    expect(load({ FLEET_UPGRADE_CONFIG: settings, FLEET_UPGRADE_AUTH_READS: 'false' }).authReads).toBe(false);
    expect(load({ FLEET_UPGRADE_AUTH_READS: '1' }).authReads).toBe(true);
    expect(load({ FLEET_UPGRADE_AUTH_READS: 'no' }, { flags: { authReads: true } }).authReads).toBe(true);
    expect(configError(() => load({ FLEET_UPGRADE_AUTH_READS: 'maybe' })).message).toBe(
      "environment: FLEET_UPGRADE_AUTH_READS: expected true or false, got 'maybe'",
    );
  });
});
