import { describe, expect, it } from 'vitest';
import type { HttpAnswer, HttpTransport } from '../../../src/api/http-transport.js';
import { scalesDiffer, toldTimeScale, watchTimeScale } from '../../../src/cli/boot/watch-time-scale.js';
import { captureLogger } from '../../support/capture-logger.js';

/** A transport whose every answer carries `headers`. */
function answering(headers: HttpAnswer['headers']): HttpTransport {
  return {
    send: async () => ({ status: 200, headers, contentType: 'application/json', text: '{}' }),
    close: async () => {},
  };
}

const request = { method: 'GET' as const, url: 'http://127.0.0.1/api/v1/x', headers: {}, timeoutMs: 1000 };

async function warningsAfter(headers: HttpAnswer['headers'], timeScale: number, answers = 5) {
  const log = captureLogger('info');
  const transport = watchTimeScale(answering(headers), { timeScale, logger: log.logger });
  for (let i = 0; i < answers; i++) await transport.send(request);
  return log.lines().filter((l) => l.level === 40);
}

describe('watchTimeScale', () => {
  it('reads the header: a positive number, else nothing', () => {
    expect(toldTimeScale({ 'x-simulator-time-scale': '60' })).toBe(60);
    expect(toldTimeScale({ 'x-simulator-time-scale': ['0.5', '2'] })).toBe(0.5);
    for (const bad of ['', ' ', '0', '-3', 'fast', 'Infinity', undefined])
      expect(toldTimeScale({ 'x-simulator-time-scale': bad })).toBeUndefined();
    expect(toldTimeScale({})).toBeUndefined();
    expect(scalesDiffer(60, 60)).toBe(false);
    expect(scalesDiffer(1 / 3, Number(String(1 / 3)))).toBe(false);
    expect(scalesDiffer(1, 60)).toBe(true);
  });

  it('warns once, naming both scales and what to set, however many answers follow', async () => {
    const warned = await warningsAfter({ 'x-simulator-time-scale': '60' }, 1);
    expect(warned).toHaveLength(1);
    expect(warned[0]).toMatchObject({
      timeScale: 1,
      simulatorTimeScale: 60,
      set: 'FLEET_UPGRADE_TIME_SCALE=60',
    });
  });

  it('says nothing at the same scale, nor when no header comes (the real service)', async () => {
    expect(await warningsAfter({ 'x-simulator-time-scale': '60' }, 60)).toEqual([]);
    expect(await warningsAfter({}, 60)).toEqual([]);
    expect(await warningsAfter({}, 1)).toEqual([]);
  });
});
