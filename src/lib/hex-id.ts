/**
 * Ids as the Health Events API writes them: a 16-digit upper-case hexadecimal string
 * ("000000000641A117"), while the upgrade endpoints give the same Collector as a decimal number
 * (104964375). The simulator writes them with `toHexId`, the client reads them with `fromHexId`;
 * both import them from here, neither from the other.
 */

/** Digits of a hexadecimal id. */
export const HEX_ID_DIGITS = 16;
const HEX_ID = /^[0-9A-Fa-f]{1,16}$/;

/** A positive safe integer as the Health Events API writes it: 16 upper-case hex digits. */
export function toHexId(id: number): string {
  if (!Number.isSafeInteger(id) || id < 0) throw new RangeError(`not an id: ${id}`);
  return id.toString(16).toUpperCase().padStart(HEX_ID_DIGITS, '0');
}

/**
 * The decimal id of a hexadecimal one (any case, at most 16 digits), or undefined when it is not
 * one or lies beyond Number.MAX_SAFE_INTEGER (no Collector id of the upgrade endpoints does).
 */
export function fromHexId(hex: string): number | undefined {
  if (!HEX_ID.test(hex)) return undefined;
  const n = BigInt(`0x${hex}`);
  return n <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(n) : undefined;
}
