/**
 * Reading a Retry-After the service (or anything in front of it) sends: capped at
 * MAX_RETRY_AFTER_MS of service time, 0 for a past date, ignored when it is neither a
 * non-negative number of seconds nor an HTTP date; `note` says when it was capped or ignored.
 */
import { describe, expect, it } from 'vitest';
import { parseRetryAfter, readRetryAfter } from '../../../src/api/classify-response.js';
import { MAX_RETRY_AFTER_MS } from '../../../src/api/retry-policy.js';

const now = Date.parse('2024-05-01T12:00:00Z');

describe('readRetryAfter', () => {
  it('caps at 60 s of service time', () => {
    expect(MAX_RETRY_AFTER_MS).toBe(60_000);
    expect(readRetryAfter('999999', now)).toEqual({ ms: 60_000, note: 'capped' });
    expect(readRetryAfter('99999999999999999999999999', now)).toEqual({ ms: 60_000, note: 'capped' });
    expect(readRetryAfter('60', now)).toEqual({ ms: 60_000 });
    expect(parseRetryAfter('999999', now)).toBe(60_000);
  });

  it('reads an HTTP date: in the past as 0, in the future capped', () => {
    expect(readRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now)).toEqual({ ms: 0 });
    expect(readRetryAfter('Wed, 01 May 2024 12:00:30 GMT', now)).toEqual({ ms: 30_000 });
    expect(readRetryAfter('Thu, 01 May 2025 12:00:00 GMT', now)).toEqual({ ms: 60_000, note: 'capped' });
  });

  it.each(['-1', '-999999', 'soon', '', '1e9', 'Infinity', 'NaN', '0x10', '5, 10', 'Mon', 'Wed, 99 Foo'])(
    'ignores %j',
    (value) => {
      expect(readRetryAfter(value, now)).toEqual({ ms: undefined, note: 'ignored' });
    },
  );

  it('is silent when there is no header', () => {
    expect(readRetryAfter(undefined, now)).toEqual({ ms: undefined });
  });
});
