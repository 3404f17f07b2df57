/**
 * The rollout API's behaviour when Redis fails it (stubbed stores, no Redis): a Redis that does
 * not answer gives 503 within the bound rather than a hanging request, an unexpected error 500
 * (logged, without the request's headers), and the index at `/` lists the API.
 */
import { request } from 'undici';
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningHttpServer } from '../../../src/http/start-http-server.js';
import { captureLogger } from '../../support/capture-logger.js';
import { startStubRolloutServer } from '../../support/stub-rollout-server.js';

const servers: RunningHttpServer[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function start(get: () => Promise<unknown>) {
  const log = captureLogger('debug');
  const server = await startStubRolloutServer({
    get,
    list: get,
    redis: {},
    logger: log.logger,
    redisWaitMs: 50,
  });
  servers.push(server);
  const call = async (path: string, method: 'GET' | 'POST' = 'GET') => {
    const res = await request(`${server.url}${path}`, {
      method,
      headers: { authorization: 'Bearer secret-header-value', 'content-type': 'application/json' },
      ...(method === 'POST' ? { body: '{}' } : {}),
    });
    return { status: res.statusCode, json: JSON.parse(await res.body.text()) };
  };
  return { call, log };
}

describe('createRolloutApi when Redis fails', () => {
  it('answers 503 when Redis does not answer within the bound', async () => {
    const { call } = await start(() => new Promise(() => undefined));
    const res = await call('/rollouts/a@1');
    expect(res.status).toBe(503);
    expect(res.json.error).toEqual({
      code: 'unavailable',
      message: 'Redis did not answer within 0.05 s; try again',
    });
    const post = await call('/rollouts/a@1/pause', 'POST');
    expect(post.status).toBe(503);
    expect(post.json.error.message).toContain('the pause may still take effect');
  });

  it('answers 500 to an unexpected error and logs it without the request’s headers', async () => {
    const { call, log } = await start(() =>
      Promise.reject(new Error('READONLY You can’t write against a read only replica')),
    );
    const res = await call('/rollouts/a@1/history');
    expect(res.status).toBe(500);
    expect(res.json).toEqual({ error: { code: 'internal', message: 'internal error' } });
    const line = log.lines().find((l) => l.msg === 'http request failed');
    expect(line).toMatchObject({
      method: 'GET',
      path: '/rollouts/a@1/history',
      err: expect.stringMatching(/READONLY/),
    });
    expect(log.text()).not.toContain('secret-header-value');
  });

  it('lists the API at /', async () => {
    const { call } = await start(async () => undefined);
    expect((await call('/')).json.endpoints).toEqual([
      '/metrics',
      '/healthz',
      '/readyz',
      '/status',
      '/rollouts',
      '/rollouts/{id}',
      '/rollouts/{id}/history',
      '/rollouts/{id}/report',
      '/audit',
      '/whoami',
      '/eta',
      'POST /rollouts/{id}/pause',
      'POST /rollouts/{id}/resume',
      'POST /rollouts/{id}/abort',
      'POST /rollouts/{id}/promote',
      'POST /rollouts/{id}/approve',
      'POST /rollouts/{id}/retry',
      'POST /rollouts/{id}/rollback',
      'POST /rollouts/{id}/forget',
    ]);
  });
});
