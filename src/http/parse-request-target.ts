/**
 * The request line's target, parsed without trusting it: `new URL(req.url, base)` throws on `//`
 * (a scheme-relative URL with no host) and a throw in a request handler kills the process, so the
 * target is taken apart by hand and every problem is an HttpError (a 4xx answer).
 */
import { echo, HttpError } from './http-error.js';

export interface RequestTarget {
  /** The path as sent, without its query and one trailing slash, e.g. `/rollouts/a%40b/pause`. */
  path: string;
  /** The path's segments, percent-decoded: `['rollouts', 'a@b', 'pause']`; `[]` for `/`. */
  segments: string[];
  query: URLSearchParams;
}

export function parseRequestTarget(raw: string | undefined): RequestTarget {
  const text = raw ?? '/';
  // Only the origin form (`/path?query`): the absolute form is for proxies, `*` for OPTIONS.
  if (!text.startsWith('/'))
    throw new HttpError('invalid', `the request target must be a path starting with /, not ${echo(text)}`);
  const q = text.indexOf('?');
  let path = q === -1 ? text : text.slice(0, q);
  const query = new URLSearchParams(q === -1 ? '' : text.slice(q + 1));
  // `//x` is not `/x`: an empty segment names nothing.
  if (path.includes('//')) throw new HttpError('not_found', `no such path: ${echo(path)}`);
  if (path.length > 1 && path.endsWith('/')) path = path.slice(0, -1);
  if (path === '/') return { path, segments: [], query };
  const segments = path
    .slice(1)
    .split('/')
    .map((part) => {
      try {
        return decodeURIComponent(part);
      } catch {
        throw new HttpError('invalid', `malformed percent-encoding in the path: ${echo(part)}`);
      }
    });
  return { path, segments, query };
}
