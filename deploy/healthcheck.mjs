// @ts-check
/**
 * The image's HEALTHCHECK (deploy/Dockerfile), with node alone (the image has no curl): asks the
 * endpoint that the container's own command serves, found from that command line (PID 1's, or
 * its child's under `docker run --init`) and the environment, the way the CLI finds it:
 *   - `run`, `worker`: GET /healthz at --listen, else FLEET_UPGRADE_WORKER_LISTEN (worker only),
 *     else FLEET_UPGRADE_LISTEN (the image sets 0.0.0.0:9464), else the CLI's default;
 *   - `simulate --port N`: GET /_sim/stats on port N (loopback callers only: the check runs inside);
 *   - anything else (a one-off command, `simulate` on a random port): nothing to ask, healthy.
 * Exit 0 when the answer is 2xx within 2 s, 1 otherwise. A wildcard listen address (0.0.0.0, ::)
 * is asked on loopback.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * @param {readonly string[]} argv the container's command line (PID 1's arguments)
 * @param {Record<string, string | undefined>} env
 * @returns {string | undefined} the URL to ask, or undefined when the command serves nothing
 */
export function healthUrl(argv, env) {
  const entry = argv.findIndex((a) => a.endsWith('fleet-upgrade.js') || a.endsWith('fleet-upgrade'));
  const args = entry >= 0 ? argv.slice(entry + 1) : [];
  const command = args[0];
  const flag = (/** @type {string} */ name) => {
    for (let i = 1; i < args.length; i++) {
      const a = /** @type {string} */ (args[i]);
      if (a === name) return args[i + 1];
      if (a.startsWith(`${name}=`)) return a.slice(name.length + 1);
    }
    return undefined;
  };
  if (command === 'run' || command === 'worker') {
    const listen =
      flag('--listen') ??
      (command === 'worker' ? env.FLEET_UPGRADE_WORKER_LISTEN : undefined) ??
      env.FLEET_UPGRADE_LISTEN ??
      (command === 'worker' ? '127.0.0.1:9465' : '127.0.0.1:9464');
    const at = listen.lastIndexOf(':');
    const host = listen.slice(0, at).replace(/^\[(.*)\]$/, '$1');
    const port = listen.slice(at + 1);
    const target = ['', '0.0.0.0', '::'].includes(host)
      ? '127.0.0.1'
      : host.includes(':')
        ? `[${host}]`
        : host;
    return `http://${target}:${port}/healthz`;
  }
  if (command === 'simulate') {
    const port = Number(flag('--port') ?? 0);
    return port > 0 ? `http://127.0.0.1:${port}/_sim/stats` : undefined;
  }
  return undefined;
}

/** PID 1's command line, or under an init (tini, docker-init) that of the process it started. */
function containerCommand() {
  const read = (/** @type {string} */ pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
    } catch {
      return [];
    }
  };
  const init = read('1');
  if (init.some((a) => a.endsWith('fleet-upgrade.js'))) return init;
  try {
    const child = readFileSync('/proc/1/task/1/children', 'utf8').trim().split(/\s+/)[0];
    if (child) return read(child);
  } catch {
    // no /proc children list: fall back to PID 1's own line
  }
  return init;
}

/**
 * @param {string | undefined} url
 * @returns {Promise<number>} the exit code
 */
export async function check(url) {
  if (!url) return 0;
  try {
    const res = await fetch(url, { signal: AbortSignal.timeout(2000) });
    await res.arrayBuffer();
    return res.ok ? 0 : 1;
  } catch {
    return 1;
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.exit(await check(healthUrl(containerCommand(), process.env)));
}
