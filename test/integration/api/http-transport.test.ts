/**
 * The undici transport over loopback: keep-alive, the "written out" hook the request budget
 * relies on, and whether a failure may have reached the service.
 */
import { afterEach, describe, expect, it } from 'vitest';
import {
  createUndiciTransport,
  type HttpTransport,
  TransportError,
} from '../../../src/api/http-transport.js';
import { reply, startStubServer, stopStubServers } from '../../support/stub-server.js';

const transports: HttpTransport[] = [];
afterEach(async () => {
  await Promise.all(transports.splice(0).map((t) => t.close()));
  await stopStubServers();
});

function transport(): HttpTransport {
  const t = createUndiciTransport({ connections: 4 });
  transports.push(t);
  return t;
}

const get = (url: string, extra: { onSent?: () => void; timeoutMs?: number } = {}) => ({
  method: 'GET' as const,
  url,
  headers: { accept: 'application/json', 'content-type': 'application/json' },
  timeoutMs: extra.timeoutMs ?? 2000,
  ...(extra.onSent ? { onSent: extra.onSent } : {}),
});

describe('undici transport', () => {
  it('reuses one kept-alive connection and reports each request once it is written', async () => {
    const sockets = new Set<unknown>();
    const stub = await startStubServer((_req, res) => {
      sockets.add(res.socket);
      reply(res, 200, { ok: true });
    });
    const t = transport();
    let sent = 0;
    for (let i = 0; i < 3; i++) {
      const answer = await t.send(get(`${stub.url}/x`, { onSent: () => sent++ }));
      // undici frees the connection a tick after the body ends; a caller that moves on at once
      // may open a second one, which is fine, but one after another they share one.
      await new Promise((r) => setImmediate(r));
      expect(answer).toMatchObject({
        status: 200,
        text: '{"ok":true}',
        contentType: 'application/json; charset=utf-8',
      });
    }
    expect(sent).toBe(3);
    expect(sockets.size).toBe(1);
  });

  it('reports a POST as written before the answer comes', async () => {
    const order: string[] = [];
    const stub = await startStubServer((_req, res) => {
      order.push('server');
      reply(res, 202, { id: '1' });
    });
    const answer = await transport().send({
      ...get(`${stub.url}/x`, { onSent: () => order.push('sent') }),
      method: 'POST',
      body: '{"collectorId":1}',
    });
    order.push('answer');
    expect(answer.status).toBe(202);
    expect(order).toEqual(['sent', 'server', 'answer']);
    expect(stub.requests[0]?.body).toBe('{"collectorId":1}');
  });

  it('says a refused connection was never sent, and does not report it written', async () => {
    const stub = await startStubServer(() => {});
    await stub.close();
    let sent = false;
    const err = await transport()
      .send(get(`${stub.url}/x`, { onSent: () => (sent = true) }))
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TransportError);
    expect(err).toMatchObject({ kind: 'network', maybeSent: false, errorCode: 'ECONNREFUSED' });
    expect(sent).toBe(false);
  });

  it('says a connection dropped after the request may have been carried out', async () => {
    const stub = await startStubServer((_req, res) => {
      res.socket?.destroy();
    });
    const err = await transport()
      .send(get(`${stub.url}/x`))
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ kind: 'network', maybeSent: true });
  });

  it('times out a silent server, and passes a caller abort through as is', async () => {
    const stub = await startStubServer(() => {});
    const t = transport();
    await expect(t.send(get(`${stub.url}/x`, { timeoutMs: 100 }))).rejects.toMatchObject({
      kind: 'timeout',
      maybeSent: true,
    });
    const ac = new AbortController();
    const p = t.send({ ...get(`${stub.url}/x`), signal: ac.signal });
    ac.abort(new Error('shutting down'));
    await expect(p).rejects.toThrow('shutting down');
  });
});
