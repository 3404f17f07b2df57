/**
 * Where a 301 `moved` may take the credentials: only to the service's own deployments
 * (`api.sumologic.com`, `api.<deployment>.sumologic.com`, over https) or to the configured base
 * URL's own host (over https when the base is https). Anything else fails, naming the host, and
 * nothing (above all no Authorization header) is sent there.
 */
import { describe, expect, it } from 'vitest';
import { BASIC, json, SECRET, scriptedClient, targets } from './scripted-client.js';

const moved = (location: string) =>
  json(301, { status: 301, id: 'M-M-M', code: 'moved', message: 'wrong deployment' }, { location });

describe('redirect targets that are refused', () => {
  it.each([
    ['another host', 'https://evil.example/api/v1/collectors/upgrades/targets', 'evil.example'],
    [
      'a look-alike suffix',
      'https://api.eu.sumologic.com.evil.example/api/v1/x',
      'api.eu.sumologic.com.evil.example',
    ],
    ['a look-alike domain', 'https://api.evilsumologic.com/api/v1/x', 'api.evilsumologic.com'],
    [
      'a sumologic.com host that is not an API host',
      'https://www.sumologic.com/api/v1/x',
      'www.sumologic.com',
    ],
    ['a nested sumologic.com host', 'https://api.a.b.sumologic.com/api/v1/x', 'api.a.b.sumologic.com'],
    ['a deployment over plain http', 'http://api.eu.sumologic.com/api/v1/x', 'api.eu.sumologic.com'],
    ['an https base to http on loopback', 'http://127.0.0.1:8080/api/v1/x', '127.0.0.1'],
  ])('refuses %s and sends it nothing', async (_what, location, host) => {
    const t = scriptedClient([() => moved(location)]);
    const err = await t.client.listTargets().catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'ApiError', kind: 'protocol', status: 301 });
    expect((err as Error).message).toContain(host);
    expect(t.requests).toHaveLength(1);
    expect(t.client.baseUrl()).toBe('https://api.sumologic.com/api/v1');
    expect(t.log.text()).not.toContain(SECRET);
  });

  it('refuses another host from a plain-http base too (a simulator on loopback)', async () => {
    const t = scriptedClient([() => moved('http://10.1.2.3:8080/api/v1/collectors/upgrades/targets')], {
      baseUrl: 'http://127.0.0.1:8080/api/v1',
    });
    await expect(t.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringContaining('10.1.2.3'),
    });
    expect(t.requests).toHaveLength(1);
  });

  it('clips a monstrous host name in the message', async () => {
    const host = `${'a'.repeat(60)}.${'b'.repeat(60)}.${'c'.repeat(60)}.${'d'.repeat(60)}.example`;
    const t = scriptedClient([() => moved(`https://${host}/api/v1/x`)]);
    const err = (await t.client.listTargets().catch((e: unknown) => e)) as Error;
    expect(err.message.length).toBeLessThan(400);
  });
});

describe('redirect targets that are followed', () => {
  it.each([
    [
      'us1',
      'https://api.sumologic.com/api/v1/collectors/upgrades/targets',
      'https://api.sumologic.com/api/v1',
    ],
    [
      'a deployment',
      'https://api.fed.sumologic.com/api/v1/collectors/upgrades/targets',
      'https://api.fed.sumologic.com/api/v1',
    ],
    [
      'upper case',
      'https://API.KR.SUMOLOGIC.COM/api/v1/collectors/upgrades/targets',
      'https://api.kr.sumologic.com/api/v1',
    ],
  ])('follows %s with the credentials', async (_what, location, base) => {
    const t = scriptedClient([() => moved(location), () => targets], {
      baseUrl: 'https://api.eu.sumologic.com/api/v1',
    });
    await t.client.listTargets();
    expect(t.client.baseUrl()).toBe(base);
    expect(t.requests[1]?.headers.authorization).toBe(BASIC);
  });

  it('follows a move on the configured host itself (another port of a loopback simulator)', async () => {
    const t = scriptedClient(
      [() => moved('http://127.0.0.1:9090/api/v1/collectors/upgrades/targets'), () => targets],
      { baseUrl: 'http://127.0.0.1:8080/api/v1' },
    );
    await t.client.listTargets();
    expect(t.client.baseUrl()).toBe('http://127.0.0.1:9090/api/v1');
  });

  it('refuses plain http on the configured host when the base is https', async () => {
    const t = scriptedClient([() => moved('http://fleet.example.com/api/v1/x')], {
      baseUrl: 'https://fleet.example.com/api/v1',
    });
    await expect(t.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/https/),
    });
    expect(t.requests).toHaveLength(1);
  });

  it('follows at most one redirect for the life of the client, even to an allowed host', async () => {
    const t = scriptedClient([
      () => moved('https://api.de.sumologic.com/api/v1/collectors/upgrades/targets'),
      () => moved('https://api.eu.sumologic.com/api/v1/collectors/upgrades/targets'),
    ]);
    await expect(t.client.listTargets()).rejects.toMatchObject({
      kind: 'protocol',
      message: expect.stringMatching(/redirected again/),
    });
    expect(t.requests).toHaveLength(2);
  });
});
