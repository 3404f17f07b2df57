/**
 * Looks for the API access keys (every organization's) wherever the deployment leaves text: log lines, /metrics and
 * /status answers, `report` output, every Redis key and value (read by type), and the Redis
 * append-only file, which holds every value ever written, deleted ones included. Each key is
 * looked for as written and inside the Basic credentials (base64 of `id:key`) that carry it; a
 * hit names the access ID whose key it is.
 * Each place counts what it looked at, so that "no hit" is never "looked at nothing".
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from '../../../src/lib/redis/create-redis.js';

export interface SecretHit {
  /** The access ID whose key was found. */
  accessId: string;
  where: string;
  /** Up to 60 characters around the hit, the secret itself masked. */
  excerpt: string;
}

export interface SecretFigures {
  logFiles: number;
  logLines: number;
  metricsScrapes: number;
  metricsBytes: number;
  statusScrapes: number;
  reportBytes: number;
  redisKeys: number;
  /** Strings, hash fields and values, list items, set and zset members, stream fields and values. */
  redisValues: number;
  aofBytes: number;
  hits: SecretHit[];
}

export class SecretScanner {
  readonly figures: SecretFigures = {
    logFiles: 0,
    logLines: 0,
    metricsScrapes: 0,
    metricsBytes: 0,
    statusScrapes: 0,
    reportBytes: 0,
    redisKeys: 0,
    redisValues: 0,
    aofBytes: 0,
    hits: [],
  };
  readonly #needles: { accessId: string; needle: string }[];

  constructor(credentials: readonly { accessId: string; accessKey: string }[]) {
    this.#needles = credentials.flatMap(({ accessId, accessKey }) => [
      { accessId, needle: accessKey },
      { accessId, needle: Buffer.from(`${accessId}:${accessKey}`).toString('base64') },
    ]);
  }

  /** Records a hit when `text` holds a secret; true when it does. */
  check(where: string, text: string): boolean {
    for (const { accessId, needle } of this.#needles) {
      const at = text.indexOf(needle);
      if (at < 0) continue;
      const around = text.slice(Math.max(0, at - 30), at + needle.length + 30);
      if (this.figures.hits.length < 100)
        this.figures.hits.push({ accessId, where, excerpt: around.split(needle).join('<secret>') });
      return true;
    }
    return false;
  }

  logFile(file: string): void {
    const text = readFileSync(file, 'utf8');
    this.figures.logFiles++;
    const lines = text.split('\n');
    lines.forEach((line, i) => {
      if (line) this.figures.logLines++;
      this.check(`${file}:${i + 1}`, line);
    });
  }

  metrics(where: string, text: string): void {
    this.figures.metricsScrapes++;
    this.figures.metricsBytes += text.length;
    this.check(where, text);
  }

  status(where: string, text: string): void {
    this.figures.statusScrapes++;
    this.check(where, text);
  }

  report(text: string): void {
    this.figures.reportBytes += text.length;
    this.check('report', text);
  }

  /** Every key of the (private) Redis and every value, by type. */
  async redis(redis: Redis): Promise<void> {
    let cursor = '0';
    for (let round = 0; round < 100_000; round++) {
      const [next, keys] = await redis.scan(cursor, 'COUNT', 500);
      for (const key of keys) await this.#key(redis, key);
      cursor = next;
      if (cursor === '0') break;
    }
  }

  async #key(redis: Redis, key: string): Promise<void> {
    this.figures.redisKeys++;
    this.check(`redis key ${key}`, key);
    const type = await redis.type(key);
    const values: string[] = [];
    switch (type) {
      case 'string':
        values.push((await redis.get(key)) ?? '');
        break;
      case 'hash':
        for (const [f, v] of Object.entries(await redis.hgetall(key))) values.push(f, v);
        break;
      case 'list':
        values.push(...(await redis.lrange(key, 0, -1)));
        break;
      case 'set':
        values.push(...(await redis.smembers(key)));
        break;
      case 'zset':
        values.push(...(await redis.zrange(key, '0', '-1')));
        break;
      case 'stream':
        for (const [id, fields] of await redis.xrange(key, '-', '+')) values.push(id, ...fields);
        break;
      case 'none':
        return; // expired or deleted since SCAN saw it
      default:
        throw new Error(`redis key ${key} has a type the scan cannot read: ${type}`);
    }
    this.figures.redisValues += values.length;
    for (const v of values) if (this.check(`redis ${type} ${key}`, v)) break;
  }

  /** Every file of the append-only folder (base, incremental files, manifest). */
  aof(dir: string): void {
    const folder = join(dir, 'appendonlydir');
    for (const name of readdirSync(folder)) {
      const file = join(folder, name);
      if (!statSync(file).isFile()) continue;
      // A Buffer: the file may be larger than a string can be.
      const bytes = readFileSync(file);
      this.figures.aofBytes += bytes.length;
      for (const { needle } of this.#needles) {
        const at = bytes.indexOf(needle);
        if (at >= 0) {
          this.check(
            `aof ${name}`,
            bytes.subarray(Math.max(0, at - 30), at + needle.length + 30).toString('latin1'),
          );
          break;
        }
      }
    }
  }
}
