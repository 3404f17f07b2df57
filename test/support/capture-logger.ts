/** A pino logger whose lines are kept in memory, so tests can assert what was (not) logged. */
import { createLogger, type Logger } from '../../src/lib/logger.js';

export interface CapturedLogger {
  logger: Logger;
  /** Every line as parsed JSON. */
  lines(): Record<string, unknown>[];
  /** Every line as written. */
  text(): string;
}

export function captureLogger(level: 'debug' | 'info' | 'warn' = 'debug'): CapturedLogger {
  const chunks: string[] = [];
  const logger = createLogger({
    level,
    destination: { write: (chunk: string) => void chunks.push(chunk) },
  });
  return {
    logger,
    text: () => chunks.join(''),
    lines: () =>
      chunks
        .join('')
        .split('\n')
        .filter((l) => l.trim() !== '')
        .map((l) => JSON.parse(l) as Record<string, unknown>),
  };
}
