/** The one scrubber of secrets the product sends from what comes back (src/lib/scrub-secrets.ts). */
import { describe, expect, it } from 'vitest';
import {
  createScrubber,
  joinScrubbers,
  NO_SECRETS,
  REDACTED,
  secretForms,
} from '../../../src/lib/scrub-secrets.js';

const b64 = (t: string) => Buffer.from(t).toString('base64');

describe('scrubbing secrets', () => {
  it('finds a bearer token with or without its scheme, percent-encoded and JSON-escaped', () => {
    const s = createScrubber(['Bearer tok/en+1234"x']);
    expect(s.scrub('header Bearer tok/en+1234"x refused')).toBe(`header ${REDACTED} refused`);
    expect(s.scrub('token tok/en+1234"x')).toBe(`token ${REDACTED}`);
    expect(s.scrub(`q=${encodeURIComponent('tok/en+1234"x')}`)).toBe(`q=${REDACTED}`);
    expect(s.scrub('{"error":"tok/en+1234\\"x"}')).toBe(`{"error":"${REDACTED}"}`);
  });

  it('finds Basic credentials as sent, decoded (id:key) and the key alone', () => {
    const s = createScrubber([`Basic ${b64('ops:k3y-s3cret')}`]);
    expect(s.scrub(`you sent Basic ${b64('ops:k3y-s3cret')}`)).toBe(`you sent ${REDACTED}`);
    expect(s.scrub(`${b64('ops:k3y-s3cret')} is ops:k3y-s3cret`)).toBe(`${REDACTED} is ${REDACTED}`);
    expect(s.scrub('key k3y-s3cret')).toBe(`key ${REDACTED}`);
    expect(secretForms(`Basic ${b64('ops:k3y-s3cret')}`)).toContain('k3y-s3cret');
  });

  it('drops the start of a secret at the end of a text that was cut', () => {
    const s = createScrubber(['Bearer abcdefghijkl']);
    expect(s.scrub('token abcdefg', { cut: true })).toBe(`token ${REDACTED}`);
    expect(s.scrub('token abcdefg')).toBe('token abcdefg');
  });

  it('ignores short values, and a scrubber of nothing changes nothing', () => {
    expect(createScrubber(['abc']).scrub('abc abc')).toBe('abc abc');
    expect(NO_SECRETS.scrub('anything')).toBe('anything');
    expect(
      joinScrubbers(createScrubber(['secret-one']), createScrubber(['secret-two'])).scrub(
        'secret-one secret-two',
      ),
    ).toBe(`${REDACTED} ${REDACTED}`);
  });
});
