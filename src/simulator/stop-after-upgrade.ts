/**
 * Collectors that stop heartbeating some time after a successful upgrade (the vendor documents
 * a Mac Collector that "will stop" after an upgrade and needs a manual restart). Whether a
 * Collector is one of them, and each delay, are drawn from the fleet's seed and the Collector's
 * id alone, not from the shared stream: the same Collectors stop after the same delays whatever
 * order a client upgrades them in.
 */
import { createRandom, type Random } from '../lib/random.js';
import type { Delay, StopAfterUpgrade } from './schema.js';

const SALT_SUSCEPTIBLE = 0x57a9;
const SALT_STOP_DELAY = 0x57b1;
const SALT_RESTART_DELAY = 0x57c3;

/** murmur3's 32-bit finaliser: spreads close inputs (ids, counters) over the whole range. */
function mix(h: number): number {
  let x = h >>> 0;
  x = Math.imul(x ^ (x >>> 16), 0x85ebca6b);
  x = Math.imul(x ^ (x >>> 13), 0xc2b2ae35);
  return (x ^ (x >>> 16)) >>> 0;
}

/** A generator of its own for these keys (seed, Collector id, purpose, n). */
export function keyedRandom(...keys: number[]): Random {
  let h = 0x9e3779b9;
  for (const k of keys) {
    h = mix(h ^ (k >>> 0));
    h = mix(h ^ Math.floor(k / 2 ** 32));
  }
  return createRandom(h);
}

/** The share of Collectors with this osName that stop after an upgrade. */
export function stopRatioFor(s: StopAfterUpgrade, osName: string): number {
  return s.byOs && Object.hasOwn(s.byOs, osName) ? (s.byOs[osName] as number) : s.ratio;
}

/** Whether this Collector stops after its successful upgrades (when it has no override). */
export function drawsStop(s: StopAfterUpgrade, seed: number, id: number, osName: string): boolean {
  const ratio = stopRatioFor(s, osName);
  return ratio > 0 && keyedRandom(seed, id, SALT_SUSCEPTIBLE).next() < ratio;
}

function delayMs(d: Delay, rng: Random): number {
  const seconds = typeof d === 'number' ? d : rng.logNormal(d.median, d.p95);
  return Math.max(0, Math.round(seconds * 1000));
}

/** Delay from the `n`th stopping upgrade's success to the stop (n counts from 0). */
export function stopDelayMs(s: StopAfterUpgrade, seed: number, id: number, n: number): number {
  return delayMs(s.afterSeconds, keyedRandom(seed, id, SALT_STOP_DELAY, n));
}

/** Delay from the `n`th stop to the restart, or undefined when nothing restarts it. */
export function restartDelayMs(s: StopAfterUpgrade, seed: number, id: number, n: number): number | undefined {
  return s.restartAfterSeconds === undefined
    ? undefined
    : Math.max(1, delayMs(s.restartAfterSeconds, keyedRandom(seed, id, SALT_RESTART_DELAY, n)));
}
