/**
 * pino with the secrets redacted at the logger, so that no call site can leak an access key
 * or an Authorization header by accident. Messages are static strings; details go in the object.
 */
import { type DestinationStream, type LevelWithSilent, type Logger, pino } from 'pino';

export type { Logger };

export const REDACT_PATHS = [
  'accessKey',
  '*.accessKey',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'headers.authorization',
  '*.headers.authorization',
  'req.headers.authorization',
  'redisUrl',
  '*.redisUrl',
  'sentinelPassword',
  '*.sentinelPassword',
];

export interface LoggerOptions {
  level?: LevelWithSilent;
  name?: string;
  destination?: DestinationStream;
}

export function createLogger(options: LoggerOptions = {}): Logger {
  const level = options.level ?? (process.env.LOG_LEVEL as LevelWithSilent | undefined) ?? 'info';
  const opts = {
    level,
    name: options.name ?? 'fleet-upgrade',
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    base: { pid: process.pid },
  };
  return options.destination ? pino(opts, options.destination) : pino(opts);
}

/** Strips user:password from a URL before it is logged (redis://user:secret@host → redis://user:***@host). */
export function redactUrl(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = '***';
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//***@');
  }
}
