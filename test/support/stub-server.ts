/**
 * Tiny loopback HTTP servers for what the simulator does not do: answer a scripted body (HTML
 * 500, malformed JSON, a body off the schema, a 429 with Retry-After, silence), stand in for the
 * wrong deployment (301 `moved` pointing at the simulator), or sit in front of the simulator as
 * a proxy that drops the connection after the simulator has carried a request out.
 * Every server started here is closed by `stopStubServers()` (call it in afterEach).
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { request } from 'undici';

export interface SeenRequest {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}

export interface StubServer {
  /** http://127.0.0.1:PORT */
  url: string;
  /** url + /api/v1 */
  baseUrl: string;
  requests: SeenRequest[];
  close(): Promise<void>;
}

export type StubHandler = (req: SeenRequest, res: ServerResponse, n: number) => void | Promise<void>;

const servers = new Set<Server>();

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const c of req as AsyncIterable<Buffer>) chunks.push(c);
  return Buffer.concat(chunks).toString('utf8');
}

export interface StubServerOptions {
  /** Loopback address to listen on (default 127.0.0.1); e.g. 127.0.0.2 for "another host". */
  host?: string;
}

export async function startStubServer(
  handler: StubHandler,
  options: StubServerOptions = {},
): Promise<StubServer> {
  const host = options.host ?? '127.0.0.1';
  const requests: SeenRequest[] = [];
  const server = createServer(async (req, res) => {
    const seen = {
      method: req.method ?? 'GET',
      url: req.url ?? '/',
      headers: req.headers,
      body: await readBody(req),
    };
    requests.push(seen);
    try {
      await handler(seen, res, requests.length);
    } catch (err) {
      res.destroy(err as Error);
    }
  });
  servers.add(server);
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const url = `http://${host}:${(server.address() as AddressInfo).port}`;
  return { url, baseUrl: `${url}/api/v1`, requests, close: () => closeServer(server) };
}

function closeServer(server: Server): Promise<void> {
  servers.delete(server);
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeAllConnections();
  });
}

export async function stopStubServers(): Promise<void> {
  await Promise.all([...servers].map(closeServer));
}

/** Writes `body` (a string as is, anything else as JSON) with `status` and headers. */
export function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  const type = typeof body === 'string' ? 'text/html; charset=utf-8' : 'application/json; charset=utf-8';
  res.writeHead(status, { 'content-type': type, ...headers });
  res.end(text);
}

/**
 * The wrong deployment: answers every /api/v1 request 301 with the legacy `moved` body and a
 * Location at the same path under `targetBaseUrl`.
 */
export function startMovedServer(targetBaseUrl: string): Promise<StubServer> {
  return startStubServer((req, res) => {
    const rest = req.url.replace(/^\/api\/v1/, '');
    reply(
      res,
      301,
      { status: 301, id: 'M0VED-M0VED-M0VED', code: 'moved', message: 'Use the deployment in Location.' },
      { location: `${targetBaseUrl}${rest}` },
    );
  });
}

/**
 * Forwards every request to `targetUrl` (the simulator) with its headers and body; for the
 * requests `drop(req, n)` chooses, it waits for the target's answer and then destroys the
 * client's connection instead of answering: the request was carried out, the caller cannot know.
 */
export function startDroppingProxy(
  targetUrl: string,
  drop: (req: SeenRequest, n: number) => boolean,
): Promise<StubServer> {
  return startStubServer(async (req, res, n) => {
    const headers = { ...req.headers };
    delete headers.host;
    delete headers.connection;
    const answer = await request(`${targetUrl}${req.url}`, {
      method: req.method as 'GET',
      headers: headers as Record<string, string>,
      ...(req.body ? { body: req.body } : {}),
    });
    const text = await answer.body.text();
    if (drop(req, n)) {
      res.socket?.destroy();
      return;
    }
    const type = answer.headers['content-type'];
    res.writeHead(answer.statusCode, typeof type === 'string' ? { 'content-type': type } : {});
    res.end(text);
  });
}

/**
 * A service that ignores `offset`: every listing answers the same page of `ids` (any other
 * request answers 404).
 */
export function startOffsetIgnoringServer(ids: readonly number[]): Promise<StubServer> {
  return startStubServer((req, res) => {
    if (!req.url.startsWith('/api/v1/collectors/upgrades/collectors')) {
      reply(res, 404, { status: 404, id: 'NOTFD-NOTFD-NOTFD', code: 'notfound', message: 'no' });
      return;
    }
    reply(res, 200, {
      collectors: ids.map((id) => ({
        id,
        name: `c-${id}`,
        collectorType: 'Installable',
        collectorVersion: '19.115-37',
        alive: true,
      })),
    });
  });
}
