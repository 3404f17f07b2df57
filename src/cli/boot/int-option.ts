/** A commander parser of a whole-number option within bounds; a bad value is a usage error (exit 64). */
import { InvalidArgumentError } from 'commander';

export function intOption(name: string, min: number, max = Number.MAX_SAFE_INTEGER) {
  return (value: string): number => {
    if (!/^-?\d+$/.test(value))
      throw new InvalidArgumentError(`${name} must be a whole number, got '${value}'.`);
    const n = Number(value);
    if (n < min || n > max)
      throw new InvalidArgumentError(`${name} must be between ${min} and ${max}, got ${n}.`);
    return n;
  };
}
