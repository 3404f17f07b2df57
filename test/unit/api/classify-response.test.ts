import { describe, expect, it } from 'vitest';
import {
  describeAnswer,
  isRetryableKind,
  kindForStatus,
  parseErrorBody,
  parseRetryAfter,
} from '../../../src/api/classify-response.js';

describe('parseErrorBody', () => {
  it('reads the legacy shape', () => {
    const body =
      '{"status":400,"id":"BOKTB-T8R2I-HESK0","code":"collector.not.alive","message":"Not alive."}';
    expect(parseErrorBody('application/json', body)).toEqual({
      shape: 'legacy',
      vendorCode: 'collector.not.alive',
      message: 'Not alive.',
      requestId: 'BOKTB-T8R2I-HESK0',
    });
  });

  it('reads the newer shape (the real 429)', () => {
    const body =
      '{"id":"0H9HG-7A2K0-T5B0K","errors":[{"code":"rate.limit.exceeded","message":"API rate limit for this user has been exceeded."}]}';
    expect(parseErrorBody('application/json', body)).toEqual({
      shape: 'errors',
      vendorCode: 'rate.limit.exceeded',
      message: 'API rate limit for this user has been exceeded.',
      requestId: '0H9HG-7A2K0-T5B0K',
    });
  });

  it('falls back to detail when an error has no message', () => {
    const info = parseErrorBody(undefined, '{"errors":[{"code":"x","detail":"the detail"}]}');
    expect(info).toMatchObject({ vendorCode: 'x', message: 'the detail' });
  });

  it('classifies an HTML page without failing', () => {
    const info = parseErrorBody('text/html; charset=utf-8', '<!DOCTYPE html><html>401</html>');
    expect(info).toEqual({ shape: 'non-json', message: 'a non-JSON body (text/html)' });
  });

  it('classifies empty and unrecognised bodies', () => {
    expect(parseErrorBody('application/json', '  ')).toEqual({ shape: 'empty' });
    expect(parseErrorBody('application/json', '{"oops":true}')).toEqual({ shape: 'unrecognised-json' });
    expect(parseErrorBody('application/json', '[1,2]')).toEqual({ shape: 'unrecognised-json' });
  });

  it('clips long messages to one line', () => {
    const info = parseErrorBody(undefined, JSON.stringify({ code: 'c', message: `a\n${'x'.repeat(1000)}` }));
    expect(info.message?.length).toBeLessThanOrEqual(301);
    expect(info.message).not.toContain('\n');
  });
});

describe('kindForStatus', () => {
  it.each([
    [301, 'moved'],
    [400, 'invalid_request'],
    [401, 'authentication'],
    [403, 'permission'],
    [404, 'not_found'],
    [405, 'invalid_request'],
    [415, 'invalid_request'],
    [429, 'rate_limited'],
    [500, 'server'],
    [503, 'server'],
    [302, 'protocol'],
  ])('%i is %s', (status, kind) => {
    expect(kindForStatus(status)).toBe(kind);
  });

  it('retries only what another attempt can fix', () => {
    expect(isRetryableKind('server')).toBe(true);
    expect(isRetryableKind('rate_limited')).toBe(true);
    expect(isRetryableKind('network')).toBe(true);
    expect(isRetryableKind('timeout')).toBe(true);
    expect(isRetryableKind('authentication')).toBe(false);
    expect(isRetryableKind('protocol')).toBe(false);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  it('reads seconds and HTTP dates', () => {
    expect(parseRetryAfter('2', now)).toBe(2000);
    expect(parseRetryAfter('0.5', now)).toBe(500);
    expect(parseRetryAfter('Wed, 01 May 2024 12:00:03 GMT', now)).toBe(3000);
    expect(parseRetryAfter('Wed, 01 May 2024 11:00:00 GMT', now)).toBe(0);
  });
  it('ignores what it cannot read', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter('soon', now)).toBeUndefined();
    expect(parseRetryAfter('-1', now)).toBeUndefined();
  });
});

describe('describeAnswer', () => {
  it('quotes status, code, message and request id', () => {
    const info = parseErrorBody(undefined, '{"status":404,"id":"A-B-C","code":"notfound","message":"Gone."}');
    expect(describeAnswer(404, info)).toBe('answered 404 notfound: Gone. (request A-B-C)');
    expect(describeAnswer(502, { shape: 'empty' })).toBe('answered 502 with an empty body');
  });
});

describe('parseRetryAfter bounds', () => {
  const now = Date.parse('2024-05-01T12:00:00Z');
  it('caps a hostile value at 60 s', () => {
    expect(parseRetryAfter('999999', now)).toBe(60_000);
    expect(parseRetryAfter('Thu, 01 May 2025 12:00:00 GMT', now)).toBe(60_000);
  });
});
