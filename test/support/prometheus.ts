/**
 * Debian's Prometheus for the tests: `ensurePrometheusTools()` finds `prometheus` and `promtool`
 * on PATH (or in /usr/bin), or, as root with apt-get, installs the `prometheus` package (serialized
 * with flock, since several test files may ask at once); otherwise it throws one sentence saying
 * how to get them. There is no skip: a test that needs Prometheus fails without it.
 * `startPrometheus()` runs a private server on a loopback port with its storage in a temp dir;
 * `promQuery()` evaluates an instant query through the HTTP API.
 */

import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findExecutable, freeLoopbackPort } from '../../src/lib/redis/redis-server.js';
import { stopChild } from '../../src/lib/stop-child.js';

export interface PrometheusTools {
  prometheus: string;
  promtool: string;
}

export const NO_PROMETHEUS_MESSAGE =
  "These tests need Debian's Prometheus (prometheus and promtool): run `apt-get install prometheus` as root " +
  '(the tests do it themselves when run as root with apt-get), or put both on PATH.';

const APT_LOCK = join(tmpdir(), 'fleet-upgrade-apt.lock');

function findTools(env: NodeJS.ProcessEnv): PrometheusTools | undefined {
  const find = (name: string) =>
    findExecutable(name, env) ?? (existsSync(`/usr/bin/${name}`) ? `/usr/bin/${name}` : undefined);
  const prometheus = find('prometheus');
  const promtool = find('promtool');
  return prometheus && promtool ? { prometheus, promtool } : undefined;
}

let ensured: Promise<PrometheusTools> | undefined;

/** Finds (or installs, as root) prometheus and promtool; once per test process. */
export function ensurePrometheusTools(env: NodeJS.ProcessEnv = process.env): Promise<PrometheusTools> {
  ensured ??= (async () => {
    const found = findTools(env);
    if (found) return found;
    const canInstall =
      process.getuid?.() === 0 && findExecutable('apt-get', env) && findExecutable('flock', env);
    if (!canInstall) throw new Error(NO_PROMETHEUS_MESSAGE);
    // Under a lock, and checked again inside it: another test file may have installed it meanwhile.
    // policy-rc.d answering 101 keeps the package from starting a Prometheus service on :9090
    // (only when no policy of the machine's own is there; removed afterwards).
    const script = [
      'command -v promtool >/dev/null 2>&1 && command -v prometheus >/dev/null 2>&1 && exit 0',
      'own=; if [ ! -e /usr/sbin/policy-rc.d ]; then printf "#!/bin/sh\\nexit 101\\n" > /usr/sbin/policy-rc.d && chmod 755 /usr/sbin/policy-rc.d && own=1; fi',
      'apt-get update -q && apt-get install -y -q --no-install-recommends prometheus; status=$?',
      '[ -n "$own" ] && rm -f /usr/sbin/policy-rc.d',
      'exit $status',
    ].join('\n');
    const result = await run('flock', [APT_LOCK, 'sh', '-c', script], {
      env: { ...env, DEBIAN_FRONTEND: 'noninteractive' },
      timeoutMs: 600_000,
    });
    const installed = findTools(env);
    if (result.code !== 0 || !installed) {
      throw new Error(
        `apt-get install prometheus failed (exit ${result.code}): ${result.output.trim()}\n${NO_PROMETHEUS_MESSAGE}`,
      );
    }
    return installed;
  })();
  return ensured;
}

export interface RunResult {
  code: number | null;
  /** stdout and stderr, interleaved, the last 20 000 characters. */
  output: string;
}

/** Runs a command to its end (bounded by `timeoutMs`), keeping its output. */
export function run(
  cmd: string,
  args: readonly string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; timeoutMs?: number } = {},
): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, {
      env: options.env ?? process.env,
      cwd: options.cwd,
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: options.timeoutMs ?? 60_000,
    });
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-20_000);
    };
    child.stdout.on('data', keep);
    child.stderr.on('data', keep);
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, output }));
  });
}

export interface RunningPrometheus {
  /** http://127.0.0.1:PORT */
  url: string;
  /** The last lines Prometheus logged, for failure messages. */
  output(): string;
  stop(): Promise<void>;
}

/**
 * Starts `prometheus` with `config` (YAML text) on a free loopback port, storage in a temp dir, and
 * waits (bounded) until it is ready. A port race is retried; any other failure throws with its log.
 */
export async function startPrometheus(binary: string, config: string): Promise<RunningPrometheus> {
  const dir = await mkdtemp(join(tmpdir(), 'fleet-prometheus-'));
  const configFile = join(dir, 'prometheus.yml');
  await writeFile(configFile, config);
  let lastOutput = '';
  for (let attempt = 1; attempt <= 3; attempt++) {
    const port = await freeLoopbackPort();
    const child = spawn(
      binary,
      [
        `--config.file=${configFile}`,
        `--storage.tsdb.path=${join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
        '--storage.tsdb.retention.time=1h',
        '--log.level=warn',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    let output = '';
    const keep = (chunk: Buffer) => {
      output = (output + chunk.toString()).slice(-10_000);
    };
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    const killOnExit = () => child.kill('SIGKILL');
    process.once('exit', killOnExit);
    const url = `http://127.0.0.1:${port}`;
    if (await waitReady(`${url}/-/ready`, child, 20_000)) {
      return {
        url,
        output: () => output,
        stop: async () => {
          process.removeListener('exit', killOnExit);
          await stopChild(child);
          await rm(dir, { recursive: true, force: true });
        },
      };
    }
    process.removeListener('exit', killOnExit);
    await stopChild(child);
    lastOutput = output;
    if (!/address already in use/i.test(output)) break;
  }
  await rm(dir, { recursive: true, force: true });
  throw new Error(`prometheus (${binary}) did not become ready: ${lastOutput.trim().slice(-3000)}`);
}

async function waitReady(url: string, child: ChildProcess, limitMs: number): Promise<boolean> {
  const deadline = Date.now() + limitMs;
  for (let i = 0; i < 400 && Date.now() < deadline; i++) {
    if (child.exitCode !== null || child.signalCode !== null) return false;
    try {
      const res = await fetch(url, { signal: AbortSignal.timeout(1000) });
      await res.arrayBuffer();
      if (res.ok) return true;
    } catch {
      // not listening yet
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return false;
}

export interface PromSeries {
  metric: Record<string, string>;
  value: [number, string];
}

export type PromQueryResult =
  | { ok: true; series: PromSeries[]; resultType: string }
  | { ok: false; error: string };

/** An instant query through /api/v1/query; a parse or evaluation error is a value, not a throw. */
export async function promQuery(baseUrl: string, expr: string, time?: number): Promise<PromQueryResult> {
  const params = new URLSearchParams({ query: expr });
  if (time !== undefined) params.set('time', String(time));
  const res = await fetch(`${baseUrl}/api/v1/query`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: params.toString(),
    signal: AbortSignal.timeout(10_000),
  });
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: unknown };
  };
  if (body.status !== 'success' || !body.data)
    return { ok: false, error: body.error ?? `HTTP ${res.status}` };
  const { resultType, result } = body.data;
  // A scalar or string result is one value, not a list of series.
  const series = Array.isArray(result)
    ? (result as PromSeries[])
    : [{ metric: {}, value: result as [number, string] }];
  return { ok: true, series, resultType };
}

/** GET a Prometheus API path and return its `data` (throws on an error status). */
export async function promApi<T>(baseUrl: string, path: string): Promise<T> {
  const res = await fetch(`${baseUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; error?: string; data: T };
  if (body.status !== 'success') throw new Error(`${path}: ${body.error ?? res.status}`);
  return body.data;
}

export { stopChild };
