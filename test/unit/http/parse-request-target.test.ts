/**
 * The request target taken apart without trusting it (src/http/parse-request-target.ts): `//`,
 * malformed percent-encodings and absolute forms are 4xx HttpErrors, never a throw of URL.
 */
import { describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/http/http-error.js';
import { parseRequestTarget } from '../../../src/http/parse-request-target.js';

function refused(raw: string): HttpError {
  try {
    parseRequestTarget(raw);
  } catch (err) {
    expect(err).toBeInstanceOf(HttpError);
    return err as HttpError;
  }
  throw new Error(`expected ${raw} to be refused`);
}

describe('parseRequestTarget', () => {
  it('splits the path into decoded segments and keeps the query', () => {
    expect(parseRequestTarget('/')).toMatchObject({ path: '/', segments: [] });
    expect(parseRequestTarget(undefined)).toMatchObject({ path: '/', segments: [] });
    const t = parseRequestTarget('/rollouts/linux-fleet%4019.470-4/history/?limit=5');
    expect(t.path).toBe('/rollouts/linux-fleet%4019.470-4/history');
    expect(t.segments).toEqual(['rollouts', 'linux-fleet@19.470-4', 'history']);
    expect(t.query.get('limit')).toBe('5');
    expect(parseRequestTarget('/rollouts/a@1.0-1').segments).toEqual(['rollouts', 'a@1.0-1']);
  });

  it('answers 404 to empty segments (`//` included) rather than normalizing them', () => {
    for (const raw of ['//', '///', '//healthz', '/rollouts//pause', '/healthz//']) {
      expect(refused(raw)).toMatchObject({ code: 'not_found', status: 404 });
    }
  });

  it('answers 400 to a malformed percent-encoding and to a target that is not a path', () => {
    for (const raw of ['/rollouts/%E0%A4%A', '/%', '/a/%zz', '/%C0%80']) {
      expect(refused(raw)).toMatchObject({ code: 'invalid', status: 400 });
    }
    for (const raw of ['http://daemon/healthz', '*', '', 'healthz']) {
      expect(refused(raw)).toMatchObject({ code: 'invalid', status: 400 });
    }
  });

  it('repeats at most a clipped, printable piece of the target', () => {
    const err = refused(`//${'x'.repeat(5000)}\u0007`);
    expect(err.message.length).toBeLessThan(300);
    expect(err.message).not.toContain('\u0007');
  });
});
