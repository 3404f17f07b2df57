/**
 * A signing key that cannot be logged by accident: JSON (what pino writes), `String()` and
 * `util.inspect` all show `[redacted]`; only `reveal()` gives the value, at the one place that signs.
 */
import { inspect } from 'node:util';

export class Secret {
  readonly #value: string;

  constructor(value: string) {
    this.#value = value;
  }

  reveal(): string {
    return this.#value;
  }

  toJSON(): string {
    return '[redacted]';
  }

  toString(): string {
    return '[redacted]';
  }

  [inspect.custom](): string {
    return 'Secret([redacted])';
  }
}
