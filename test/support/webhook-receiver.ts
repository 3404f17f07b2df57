/**
 * A webhook receiver on loopback for the notification tests: it keeps every request (headers,
 * body, the status it answered), answers as `answer` says (a status, or `hang` to never answer),
 * can go down (connections refused) and come back on the same port, and checks signatures the
 * way the README tells receivers to.
 */
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { verifySignature, WEBHOOK_HEADERS } from '../../src/notify/sign-payload.js';

export interface ReceivedRequest {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** What the receiver answered (0: it never answered). */
  status: number;
  /** The event id header. */
  eventId: string;
}

/** A status, `hang` (never answer), or a function that writes the answer (its status is kept). */
export type Answer = number | 'hang' | ((res: ServerResponse) => void);

export interface WebhookReceiver {
  /** http://127.0.0.1:PORT */
  url: string;
  requests: ReceivedRequest[];
  /** Decides each answer (default 200). */
  answer: (req: ReceivedRequest, n: number) => Answer;
  /** Event ids answered 2xx, in the order answered. */
  delivered(path?: string): string[];
  /** Whether `req` carries a valid signature of its body under `secret`, sent in the last 5 minutes. */
  signedWith(req: ReceivedRequest, secret: string): boolean;
  /** Refuses connections until `up()`. */
  down(): Promise<void>;
  up(): Promise<void>;
  /** Answers every hanging request with `status`. */
  release(status: number): void;
  /** Resolves when `n` requests have arrived (bounded by `timeoutMs`). */
  waitForRequests(n: number, timeoutMs: number): Promise<void>;
  close(): Promise<void>;
}

const header = (h: IncomingHttpHeaders, name: string): string | undefined => {
  const v = h[name];
  return Array.isArray(v) ? v[0] : v;
};

export async function startWebhookReceiver(): Promise<WebhookReceiver> {
  const requests: ReceivedRequest[] = [];
  const hanging: { res: ServerResponse; req: ReceivedRequest }[] = [];
  let server: Server | undefined;
  let port = 0;

  const listen = async () => {
    const s = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const seen: ReceivedRequest = {
          path: req.url ?? '/',
          headers: req.headers,
          body: Buffer.concat(chunks).toString('utf8'),
          status: 0,
          eventId: header(req.headers, WEBHOOK_HEADERS.eventId) ?? '',
        };
        requests.push(seen);
        const a = receiver.answer(seen, requests.length);
        if (a === 'hang') {
          hanging.push({ res, req: seen });
          return;
        }
        if (typeof a === 'function') {
          a(res);
          seen.status = res.statusCode;
          return;
        }
        seen.status = a;
        res.writeHead(a, { 'content-type': 'text/plain' }).end(a < 300 ? 'ok' : 'not now');
      });
    });
    await new Promise<void>((resolve, reject) => {
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => resolve());
    });
    port = (s.address() as AddressInfo).port;
    server = s;
  };
  const shut = async () => {
    const s = server;
    server = undefined;
    if (!s) return;
    await new Promise<void>((resolve) => {
      s.close(() => resolve());
      s.closeAllConnections();
    });
  };
  await listen();

  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${port}`,
    requests,
    answer: () => 200,
    delivered: (path) =>
      requests
        .filter((r) => r.status >= 200 && r.status < 300 && (path === undefined || r.path === path))
        .map((r) => r.eventId),
    signedWith: (req, secret) =>
      verifySignature(
        secret,
        {
          signature: header(req.headers, WEBHOOK_HEADERS.signature),
          timestamp: header(req.headers, WEBHOOK_HEADERS.timestamp),
        },
        req.body,
        Math.floor(Date.now() / 1000),
      ),
    down: shut,
    up: listen,
    release(status) {
      for (const h of hanging.splice(0)) {
        // A request the sender gave up on (time-out) stays unanswered (status 0).
        if (h.res.destroyed || h.res.socket?.destroyed !== false) continue;
        h.req.status = status;
        h.res.writeHead(status).end();
      }
    },
    async waitForRequests(n, timeoutMs) {
      const deadline = Date.now() + timeoutMs;
      while (requests.length < n) {
        if (Date.now() > deadline)
          throw new Error(`${requests.length} requests within ${timeoutMs} ms, expected ${n}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    async close() {
      receiver.release(503);
      await shut();
    },
  };
  return receiver;
}
