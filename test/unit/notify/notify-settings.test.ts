/**
 * The `webhooks` section of the settings file, read through `loadDaemonConfig` from a real file:
 * defaults, the secret from the environment or a file (never inline: refused with file:line:field),
 * URL and event checks, and errors that name the file, the line and the field.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { WEBHOOK_DEFAULTS } from '../../../src/notify/read-webhooks.js';
import { configError } from '../../support/config-error.js';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

/** Writes the settings (`text`, or `text(dir)`) and `extra` files into a new folder. */
function settingsFile(
  text: string | ((dir: string) => string),
  extra: Record<string, string> = {},
): { file: string; dir: string } {
  const dir = mkdtempSync(join(tmpdir(), 'notify-settings-'));
  dirs.push(dir);
  const file = join(dir, 'fleet-upgrade.yaml');
  writeFileSync(file, typeof text === 'string' ? text : text(dir));
  for (const [name, content] of Object.entries(extra)) writeFileSync(join(dir, name), content);
  return { file, dir };
}

const load = (file: string, env: NodeJS.ProcessEnv = {}) =>
  loadDaemonConfig({ env, flags: { config: file }, needApi: false });

describe('webhooks in the settings file', () => {
  it('fills in the defaults and reads the secret from the environment', () => {
    const { file } = settingsFile(
      [
        'logLevel: warn',
        'webhooks:',
        '  - url: https://hooks.example.com/a?x=1',
        '    secretEnv: HOOK_SECRET',
        '',
      ].join('\n'),
    );
    const [hook, ...rest] = load(file, { HOOK_SECRET: ' s3cret\n' }).webhooks;
    expect(rest).toEqual([]);
    expect(hook).toMatchObject({
      name: 'webhook-1',
      url: 'https://hooks.example.com/a?x=1',
      events: '*',
      format: 'json',
      timeoutMs: WEBHOOK_DEFAULTS.timeoutMs,
      retry: WEBHOOK_DEFAULTS.retry,
    });
    expect(hook?.secret?.reveal()).toBe('s3cret');
    expect(JSON.stringify(hook)).not.toContain('s3cret');
    expect(JSON.stringify(hook)).not.toContain('/a?x=1');
  });

  it('reads every field, a secret file and a URL from the environment', () => {
    const { file } = settingsFile(
      (dir) =>
        [
          'webhooks:',
          '  - name: ops-chat',
          '    urlEnv: SLACK_URL',
          '    format: slack',
          '    events: [rollout.halted, rollout.awaiting_approval]',
          `    secretFile: ${join(dir, 'hook.secret')}`,
          '    timeout: 5s',
          '    retry: { initial: 2s, max: 10m, giveUpAfter: 12h }',
          '  - name: audit',
          '    url: http://127.0.0.1:8080/events',
          "    events: '*'",
          '',
        ].join('\n'),
      { 'hook.secret': 'file-secret\n' },
    );
    const hooks = load(file, { SLACK_URL: 'https://hooks.slack.com/services/T/B/X' }).webhooks;
    expect(hooks.map((h) => h.name)).toEqual(['ops-chat', 'audit']);
    expect(hooks[0]).toMatchObject({
      url: 'https://hooks.slack.com/services/T/B/X',
      format: 'slack',
      events: new Set(['rollout.halted', 'rollout.awaiting_approval']),
      timeoutMs: 5000,
      retry: { initialMs: 2000, maxMs: 600_000, giveUpAfterMs: 43_200_000 },
    });
    expect(hooks[0]?.secret?.reveal()).toBe('file-secret');
    expect(hooks[1]).toMatchObject({ events: '*', url: 'http://127.0.0.1:8080/events' });
    expect(hooks[1]?.secret).toBeUndefined();
  });

  it('refuses an inline secret with file:line:field and says where to put it', () => {
    const { file } = settingsFile(
      ['logLevel: warn', 'webhooks:', '  - url: https://hooks.example.com/a', '    secret: hunter2', ''].join(
        '\n',
      ),
    );
    const err = configError(() => load(file));
    expect(err.message).toBe(
      `${file}:4:5: webhooks[0].secret: an inline secret is refused: name an environment variable (secretEnv: NAME) or a file (secretFile: PATH) that holds it`,
    );
    expect(err.message).not.toContain('hunter2');
  });

  it.each([
    ['url: ftp://example.com/x', '2:5', 'webhooks[0].url', 'expected an http:// or https:// URL'],
    ['url: not a url', '2:5', 'webhooks[0].url', 'expected an http:// or https:// URL'],
    [
      'url: http://x\n    events: [rollout.exploded]',
      '3:14',
      'webhooks[0].events[0]',
      'expected an event type',
    ],
    ['url: http://x\n    events: []', '3:5', 'webhooks[0].events', 'list at least one event type'],
    ['url: http://x\n    format: teams', '3:5', 'webhooks[0].format', 'expected one of "json"|"slack"'],
    ['url: http://x\n    timeout: 10', '3:5', 'webhooks[0].timeout', 'a bare number has no unit'],
    [
      'url: http://x\n    secretEnv: HOOK\n    secretFile: /x',
      '4:5',
      'webhooks[0].secretFile',
      'set only one of',
    ],
    ['name: Has Spaces\n    url: http://x', '2:5', 'webhooks[0].name', 'expected lower-case letters'],
    ['format: json', '2:5', 'webhooks[0]', 'set exactly one of url and urlEnv'],
    ['url: http://x\n    sekret: y', '3:5', 'webhooks[0].sekret', 'unknown field (did you mean "secret"?)'],
    [
      'url: http://x\n    retry: { initial: 1m, max: 10s }',
      '3:27',
      'webhooks[0].retry.max',
      'must be at least retry.initial',
    ],
  ])('refuses `%s` at %s, field %s', (entry, at, field, reason) => {
    const { file } = settingsFile(['webhooks:', `  - ${entry}`, ''].join('\n'));
    const err = configError(() => load(file));
    expect(err.message).toContain(`${file}:${at}: ${field}: `);
    expect(err.message).toContain(reason);
  });

  it('sends the user:password@ of urlEnv as HTTP basic auth, never in the URL; refuses them written in url:', () => {
    const { file } = settingsFile(['webhooks:', '  - urlEnv: HOOK_URL', ''].join('\n'));
    const [hook] = load(file, { HOOK_URL: 'https://us%40r:p%3Ass@hooks.example.com/a' }).webhooks;
    expect(hook?.url).toBe('https://hooks.example.com/a');
    expect(hook?.authorization?.reveal()).toBe(`Basic ${Buffer.from('us@r:p:ss').toString('base64')}`);
    expect(JSON.stringify(hook)).not.toContain('p%3Ass');
    const inline = settingsFile(
      ['webhooks:', '  - url: https://u:hunter22@hooks.example.com/a', ''].join('\n'),
    );
    const err = configError(() => load(inline.file));
    expect(err.message).toBe(
      `${inline.file}:2:5: webhooks[0].url: credentials in the URL are refused here: put the URL in an environment variable (urlEnv: NAME); its user and password are then sent as HTTP basic auth`,
    );
    expect(err.message).not.toContain('hunter22');
  });

  it('refuses two webhooks with one name, naming the second', () => {
    const { file } = settingsFile(
      ['webhooks:', '  - url: http://a', '  - name: webhook-1', '    url: http://b', ''].join('\n'),
    );
    expect(configError(() => load(file)).message).toBe(
      `${file}:3:5: webhooks[1].name: another webhook is named 'webhook-1'`,
    );
  });

  it('names the field when the secret or the URL cannot be read', () => {
    const { file } = settingsFile(
      [
        'webhooks:',
        '  - url: http://a',
        '    secretEnv: MISSING_SECRET',
        '  - url: http://b',
        '    secretFile: /nonexistent/secret',
        '  - urlEnv: MISSING_URL',
        '',
      ].join('\n'),
    );
    const err = configError(() => load(file, { MISSING_URL: '' }));
    expect(err.message.split('\n')).toEqual([
      `${file}:3:5: webhooks[0].secretEnv: the environment variable MISSING_SECRET is not set`,
      `${file}:5:5: webhooks[1].secretFile: cannot read /nonexistent/secret (ENOENT)`,
      `${file}:6:5: webhooks[2].urlEnv: the environment variable MISSING_URL is not set`,
    ]);
  });

  it('has no webhooks by default', () => {
    const { file } = settingsFile('logLevel: warn\n');
    expect(load(file).webhooks).toEqual([]);
  });
});
