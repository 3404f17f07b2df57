/**
 * What `fleet-upgrade upgrade` asks the service before it writes a one-off, when the command can
 * reach it (the organization's settings and key are where the command runs; it needs only Redis
 * otherwise, and the daemon finds out):
 * - the build list: `--to BUILD` must be a build the organization's service offers (a one-off of
 *   one it does not offer could never start), and `latest` is resolved to tell which;
 * - the inventory (`GET collectors`, ceil(N / 1000) requests): each named Collector is installed
 *   in that organization (not hosted: the service upgrades those itself; not unknown there), and
 *   not on the build already. One that is offline is named, and kept: it is upgraded if it comes
 *   back while the one-off runs.
 * A service that cannot be asked (no key here, not answering) is said in one sentence; the
 * command then goes on as before. Nothing here logs a key.
 */
import type { CollectorUpgradeClient } from '../../api/index.js';
import { ConfigError } from '../../lib/errors.js';
import { createLogger } from '../../lib/logger.js';
import { checkOneOffWith, type Keys, type OneOffCheck, whereOf } from '../../rollout/index.js';
import { createApi } from './create-api.js';
import { loadDaemonConfig } from './daemon-config.js';

/** The client of `org`'s service as this command can build it, or why it cannot. */
function clientOf(
  flags: { config?: string },
  org: string,
  state: { redis: Parameters<typeof createApi>[0]['redis']; keys: Keys },
): { client: CollectorUpgradeClient } | { why: string } {
  let config: ReturnType<typeof loadDaemonConfig>;
  try {
    config = loadDaemonConfig({ env: process.env, flags, needApi: true });
  } catch (err) {
    if (!(err instanceof ConfigError)) throw err;
    return { why: `its settings are not complete here (${err.issues[0]?.reason ?? err.message})` };
  }
  const settings = config.orgs.find((o) => o.name === org);
  if (!settings) return { why: `the settings name no organization '${org}'` };
  const { client } = createApi({
    api: settings.api,
    org,
    config,
    ...(state.redis ? { redis: state.redis } : {}),
    keys: state.keys,
    logger: createLogger({ level: 'silent' }),
  });
  return { client };
}

export async function checkOneOff(input: {
  flags: { config?: string };
  org: string;
  to: string;
  collectors: readonly number[];
  state: { redis: Parameters<typeof createApi>[0]['redis']; keys: Keys };
}): Promise<OneOffCheck> {
  const got = clientOf(input.flags, input.org, input.state);
  if ('why' in got)
    return { findings: new Map(), unchecked: `could not ask ${whereOf(input.org)}: ${got.why}` };
  try {
    return await checkOneOffWith(got.client, input);
  } finally {
    await got.client.close();
  }
}

export {
  checkOneOffWith,
  describeFinding,
  type OneOffCheck,
} from '../../rollout/index.js';
