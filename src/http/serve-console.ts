/**
 * The web console's files (built by scripts/build-console.mjs into dist/console/ beside this
 * module's dist/http/): `GET /` answers its page to a browser (an `Accept` of `text/html`) and the
 * JSON index of endpoints to anyone else, as before; `GET /console/{file}` its script and styles.
 * Read once at start and kept in memory with their gzip and an ETag; nothing is fetched from
 * elsewhere (air-gapped networks), and the Content-Security-Policy lets the page load and call
 * only its own origin. The page itself holds no data: it reads the API as its person.
 */

import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { gzipSync } from 'node:zlib';

const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
};

const SECURITY = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'",
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
};

interface Asset {
  type: string;
  body: Buffer;
  gzip: Buffer;
  etag: string;
}

export interface ConsoleAssets {
  /** Whether the request is one of the console's: answered when so. */
  serve(req: IncomingMessage, res: ServerResponse, segments: readonly string[]): boolean;
  /** The files and their gzipped sizes (bytes), for the benchmark and the docs. */
  sizes(): { name: string; bytes: number; gzipped: number }[];
}

/**
 * Where the built console is: beside the built daemon (dist/http -> dist/console), or, when the
 * daemon runs from its sources (tests, tsx), in the repository's dist/console.
 */
function builtConsole(): URL {
  const beside = new URL('../console/', import.meta.url);
  return existsSync(new URL('app.js', beside)) ? beside : new URL('../../dist/console/', import.meta.url);
}

/** The built console under `dir` (default: dist/console), or undefined when it was not built. */
export function loadConsoleAssets(dir = builtConsole()): ConsoleAssets | undefined {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return undefined;
  }
  const assets = new Map<string, Asset>();
  for (const name of names) {
    const type = TYPES[name.slice(name.lastIndexOf('.'))];
    if (!type) continue;
    const body = readFileSync(new URL(name, dir));
    const etag = `"${createHash('sha256').update(body).digest('base64url').slice(0, 22)}"`;
    assets.set(name, { type, body, gzip: gzipSync(body, { level: 9 }), etag });
  }
  if (!assets.has('index.html')) return undefined;

  const send = (req: IncomingMessage, res: ServerResponse, a: Asset, cache: string) => {
    const headers: Record<string, string> = {
      ...SECURITY,
      'content-type': a.type,
      etag: a.etag,
      'cache-control': cache,
      vary: 'accept-encoding, accept',
    };
    if (req.headers['if-none-match'] === a.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gzip = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gzip ? a.gzip : a.body;
    res.writeHead(200, {
      ...headers,
      ...(gzip ? { 'content-encoding': 'gzip' } : {}),
      'content-length': String(body.length),
    });
    res.end(req.method === 'HEAD' ? undefined : body);
  };

  return {
    serve(req, res, segments) {
      if (req.method !== 'GET' && req.method !== 'HEAD') return false;
      const [first, file, ...more] = segments;
      if (first === undefined) {
        if (!/\btext\/html\b/.test(String(req.headers.accept ?? ''))) return false;
        send(req, res, assets.get('index.html') as Asset, 'no-cache');
        return true;
      }
      if (first !== 'console' || file === undefined || more.length > 0) return false;
      const asset = file === 'index.html' ? undefined : assets.get(file);
      if (!asset) return false;
      send(req, res, asset, 'no-cache');
      return true;
    },
    sizes: () => [...assets].map(([name, a]) => ({ name, bytes: a.body.length, gzipped: a.gzip.length })),
  };
}
