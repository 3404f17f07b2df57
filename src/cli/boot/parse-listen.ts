/** HOST:PORT of the HTTP endpoints (`listen`, `FLEET_UPGRADE_LISTEN`, `--listen`), IPv6 in brackets. */
import { ConfigError, FleetError } from '../../lib/errors.js';

/**
 * `text` as host and port; `field` names where it came from. A flag's bad value is a usage error
 * (exit 64), the settings' a ConfigError (exit 78).
 */
export function parseListen(text: string, field: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(text.trim());
  const port = m ? Number(m[3]) : Number.NaN;
  if ((!m || port > 65535) && field.startsWith('--'))
    // A flag is the command line's: a usage error (exit 64), not the settings' (78).
    throw new FleetError(
      'FLEET_ERR_USAGE',
      `${field}: expected HOST:PORT such as 127.0.0.1:9464, got '${text}'`,
    );
  if (!m || port > 65535) {
    throw new ConfigError(`${field}: expected HOST:PORT such as 127.0.0.1:9464, got '${text}'`, [
      { file: field, field: 'listen', reason: 'expected HOST:PORT' },
    ]);
  }
  return { host: (m[1] ?? m[2]) as string, port };
}
