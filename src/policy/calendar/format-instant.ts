/**
 * An instant as an operator reads it in `status` and in errors: `2026-12-27 09:00 UTC`,
 * `2026-12-20 18:00 Europe/Berlin`. Seconds are shown only when they are not zero; a wall time
 * that the zone shows twice (clocks moved back) carries its offset, so that it stays unambiguous.
 */
import { instantsOfWallTime, isKnownTimeZone, zoneOffset } from './zone-offset.js';

/** `YYYY-MM-DD HH:MM[:SS]` of a wall-clock time held as if it were UTC. */
export function formatWallTime(wallMs: number): string {
  const iso = new Date(wallMs).toISOString(); // 2026-12-27T09:00:05.000Z
  const seconds = iso.slice(17, 19);
  return `${iso.slice(0, 10)} ${iso.slice(11, 16)}${seconds === '00' ? '' : `:${seconds}`}`;
}

/** `+01:00` for an offset of one hour. */
export function formatOffset(offsetMs: number): string {
  const minutes = Math.round(Math.abs(offsetMs) / 60_000);
  const hh = String(Math.floor(minutes / 60)).padStart(2, '0');
  const mm = String(minutes % 60).padStart(2, '0');
  return `${offsetMs < 0 ? '-' : '+'}${hh}:${mm}`;
}

/** `epochMs` as wall-clock time in `timeZone` (default UTC; an unknown zone is shown as UTC). */
export function formatInstant(epochMs: number, timeZone = 'UTC'): string {
  const zone = isKnownTimeZone(timeZone) ? timeZone : 'UTC';
  const offset = zoneOffset(zone, epochMs);
  const wall = epochMs + offset;
  const text = `${formatWallTime(wall)} ${zone}`;
  return instantsOfWallTime(zone, wall).length > 1 ? `${text} (UTC${formatOffset(offset)})` : text;
}
