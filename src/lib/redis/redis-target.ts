/**
 * Which Redis a deployment uses, as its settings name it: one server (a URL), a primary found
 * through Sentinel, or a Cluster. The password (and an ACL user name) is kept apart from the
 * addresses, so that an address can be shown anywhere (`describeRedis`) and the password only
 * reaches ioredis. Parsing of `host:port,host:port` lists lives here too, with errors that name
 * the field they came from.
 */

export interface HostPort {
  host: string;
  port: number;
}

/** Credentials of the data nodes (and, for Sentinel, of the sentinels), never logged. */
export interface RedisAuth {
  username?: string;
  password?: string;
  /** Sentinel only: the sentinels' own password (`requirepass` on the sentinels). */
  sentinelPassword?: string;
}

export type RedisTarget =
  | ({ kind: 'standalone'; url: string } & RedisAuth)
  | ({ kind: 'sentinel'; sentinels: HostPort[]; name: string } & RedisAuth)
  | ({ kind: 'cluster'; nodes: HostPort[] } & RedisAuth);

export type RedisTopology = RedisTarget['kind'];

/** A URL names a standalone server; a target is taken as it is. */
export function asTarget(target: RedisTarget | string): RedisTarget {
  return typeof target === 'string' ? { kind: 'standalone', url: target } : target;
}

/**
 * `host:port,host:port` (spaces allowed around items, IPv6 as `[::1]:26379`). Returns the list,
 * or why not in words (the caller names the field).
 */
export function parseHostPorts(text: string): { ok: true; list: HostPort[] } | { ok: false; reason: string } {
  const items = text
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (items.length === 0) return { ok: false, reason: 'expected host:port[,host:port...], got nothing' };
  const list: HostPort[] = [];
  for (const item of items) {
    const m = /^(?:\[([0-9a-fA-F:.]+)\]|([^:\s[\]]+)):(\d{1,5})$/.exec(item);
    const port = m ? Number(m[3]) : Number.NaN;
    if (!m || port < 1 || port > 65535)
      return { ok: false, reason: `'${item}' is not host:port (a port from 1 to 65535)` };
    list.push({ host: (m[1] ?? m[2]) as string, port });
  }
  return { ok: true, list };
}

function hostPort(h: HostPort): string {
  return h.host.includes(':') ? `[${h.host}]:${h.port}` : `${h.host}:${h.port}`;
}

/** The target in words, without any credential: for messages and logs. */
export function describeRedis(target: RedisTarget | string): string {
  const t = asTarget(target);
  switch (t.kind) {
    case 'standalone':
      return `Redis at ${urlWithoutCredentials(t.url)}`;
    case 'sentinel':
      return `Redis '${t.name}' through Sentinel ${t.sentinels.map(hostPort).join(',')}`;
    case 'cluster':
      return `Redis Cluster ${t.nodes.map(hostPort).join(',')}`;
  }
}

/** Which setting named it, for advice in messages. */
export function settingOf(target: RedisTarget | string): string {
  const t = asTarget(target);
  if (t.kind === 'sentinel') return 'REDIS_SENTINELS and REDIS_SENTINEL_NAME';
  if (t.kind === 'cluster') return 'REDIS_CLUSTER_NODES';
  return 'REDIS_URL';
}

/** `url` for a message: without user name or password (also a `?password=` parameter). */
export function urlWithoutCredentials(url: string): string {
  try {
    const u = new URL(url);
    u.username = '';
    u.password = '';
    u.searchParams.delete('password');
    return u.toString();
  } catch {
    return url.replace(/\/\/[^@/]*@/, '//');
  }
}
