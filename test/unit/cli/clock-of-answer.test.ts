/**
 * `status --server` draws on the daemon's clock as `GET /status` tells it in
 * `X-Fleet-Upgrade-Clock: <ms>; scale=<n>`; a header that is absent or not of that shape (an older
 * daemon, or anything else) falls back to this machine's clock, never to a wrong number.
 */
import { describe, expect, it } from 'vitest';
import { clockOfAnswer } from '../../../src/cli/commands/status.js';

const ASKED = 1_795_000_000_000;

describe('clockOfAnswer', () => {
  it('reads the daemon’s time and scale', () => {
    expect(clockOfAnswer('1795932600195; scale=300', ASKED)).toEqual({ now: 1795932600195, scale: 300 });
    expect(clockOfAnswer('1795932600195; scale=1', ASKED)).toEqual({ now: 1795932600195, scale: 1 });
    expect(clockOfAnswer('1795932600195; scale=0.5', ASKED)).toEqual({ now: 1795932600195, scale: 0.5 });
  });

  it('falls back to this machine’s clock on anything else', () => {
    for (const header of [
      undefined,
      '',
      ['1795932600195; scale=300'],
      '1795932600195',
      '1795932600195; scale=0',
      '1795932600195; scale=-3',
      '-1; scale=3',
      `${'9'.repeat(40)}; scale=3`,
      '1795932600195; scale=3; x',
    ])
      expect(clockOfAnswer(header, ASKED), String(header)).toEqual({ now: ASKED, scale: 1 });
  });
});
