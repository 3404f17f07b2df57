// Types of provision-redis.mjs (plain ESM, so that node runs it without a build); see its header.

/** Where the Redis came from: REDIS_URL, a redis-server already on PATH, a container, apt-get. */
export type RedisSource = 'env' | 'local' | 'container' | 'apt';

/** What provisioning logs through; a pino logger fits. Static messages, details in the object. */
export interface ProvisionLogger {
  info(details: object, msg: string): void;
  warn(details: object, msg: string): void;
}

export interface PrepareRedisOptions {
  /** Default: one line per message on stderr, prefixed `fleet-upgrade:`. */
  logger?: ProvisionLogger;
  /** Environment to read REDIS_URL and PATH from (default process.env); not modified. */
  env?: NodeJS.ProcessEnv;
  /** A container's Redis: `appendonly yes` (default false). */
  appendOnly?: boolean;
  /** Replaceable steps, for tests of the fallback order. */
  deps?: Partial<PrepareRedisDeps>;
}

export interface PrepareRedisDeps {
  findExecutable(name: string, env: NodeJS.ProcessEnv): string | undefined;
  probeContainerRuntime(env: NodeJS.ProcessEnv): Promise<boolean>;
  startContainer(options: { appendOnly: boolean }): Promise<{ url: string; stop(): Promise<void> }>;
  isRoot(): boolean;
  aptInstall(logger: ProvisionLogger, env: NodeJS.ProcessEnv): Promise<void>;
}

export interface PreparedRedis {
  source: RedisSource;
  /**
   * The environment in which the product's `ensureRedis` (or a child process running it) finds
   * this Redis: a container's URL in REDIS_URL, the directory of an installed redis-server on PATH.
   */
  env: NodeJS.ProcessEnv;
  /** Stops a container started here (no-op otherwise). */
  stop(): Promise<void>;
}

/** The product's `ensureRedis` (src/lib/redis/redis-server.ts), as far as provisioning uses it. */
export type EnsureRedisFunction<L extends ProvisionLogger> = (options: {
  logger: L;
  env: NodeJS.ProcessEnv;
  dataDir?: string;
  appendOnly?: boolean;
}) => Promise<{ url: string; stop(): Promise<void> }>;

export interface ProvisionRedisOptions<L extends ProvisionLogger>
  extends Omit<PrepareRedisOptions, 'logger'> {
  logger: L;
  /** The product's `ensureRedis`: passed in, since a plain script cannot import the TypeScript sources. */
  ensureRedis: EnsureRedisFunction<L>;
  /** Directory for a private server's files (default: a fresh temp dir, removed at stop). */
  dataDir?: string;
}

export interface ProvisionedRedis {
  url: string;
  source: RedisSource;
  /** Stops the private server or the container started for this (no-op for REDIS_URL). */
  stop(): Promise<void>;
}

/** One sentence saying how to get Redis, when no step found or made one. */
export const NO_REDIS_MESSAGE: string;

/** Makes sure the product's order will find a Redis; see the module's header. */
export function prepareRedis(options?: PrepareRedisOptions): Promise<PreparedRedis>;

/** The whole order: `prepareRedis`, then the product's `ensureRedis` in the environment it answered. */
export function provisionRedis<L extends ProvisionLogger>(
  options: ProvisionRedisOptions<L>,
): Promise<ProvisionedRedis>;

/** Whether a Docker-compatible engine answers `GET /_ping` within a second. */
export function probeContainerRuntime(env?: NodeJS.ProcessEnv): Promise<boolean>;
