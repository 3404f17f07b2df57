/**
 * deploy/Dockerfile, without a container engine (none runs here):
 *   - dockerfile-utils (the validator behind VS Code's Dockerfile support) finds no problem, and
 *     finds the ones planted in a broken copy;
 *   - every base image is pinned by digest, or the test says, skipped, which one is not yet (no
 *     registry can be reached here to read a digest; the Dockerfile says how to pin it);
 *   - multi-stage: the final stage installs production dependencies only, and that install line,
 *     rehearsed with --dry-run against the committed lock, adds no dev dependency;
 *   - the processes listen on 0.0.0.0 inside the container (so `docker run -p` reaches them), on
 *     the port the image exposes;
 *   - the HEALTHCHECK runs node (no curl in the image) on deploy/healthcheck.mjs, copied where
 *     the check looks for it, and that script answers healthy for a 2xx /healthz only;
 *   - everything the build copies is in the build context (.dockerignore leaves it in).
 * runtime-dependencies.test.ts checks that the built code imports dependencies only.
 */

import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, posix } from 'node:path';
import { validate } from 'dockerfile-utils';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { check, healthUrl } from '../../../deploy/healthcheck.mjs';
import { loadDaemonConfig } from '../../../src/cli/boot/daemon-config.js';
import { run } from '../../support/prometheus.js';
import { reply, startStubServer, stopStubServers } from '../../support/stub-server.js';

const DOCKERFILE = 'deploy/Dockerfile';
const text = readFileSync(DOCKERFILE, 'utf8');

interface Instruction {
  keyword: string;
  args: string;
}
interface Stage {
  from: string;
  name?: string;
  instructions: Instruction[];
}

/** The stages of a Dockerfile: instructions with continuations joined, comments left out. */
function stages(dockerfile: string): Stage[] {
  const out: Stage[] = [];
  const logical = dockerfile
    .replace(/\\\n/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  for (const line of logical) {
    const [keyword = '', ...rest] = line.split(/\s+/);
    const args = rest.join(' ');
    if (keyword.toUpperCase() === 'FROM') {
      const [from = '', as, name] = args.split(/\s+/);
      out.push({ from, ...(as?.toUpperCase() === 'AS' && name ? { name } : {}), instructions: [] });
    } else {
      out.at(-1)?.instructions.push({ keyword: keyword.toUpperCase(), args });
    }
  }
  return out;
}

const all = stages(text);
const final = all.at(-1) as Stage;
const inFinal = (keyword: string) => final.instructions.filter((i) => i.keyword === keyword);
/** ENV KEY=VALUE ... of the final stage (the form this Dockerfile uses). */
const finalEnv = Object.fromEntries(
  inFinal('ENV').flatMap((i) =>
    i.args
      .split(/\s+/)
      .map((kv) => kv.split('='))
      .map(([k, ...v]) => [k as string, v.join('=')]),
  ),
);
const workdir = inFinal('WORKDIR').at(-1)?.args ?? '/';

const temp = await mkdtemp(join(tmpdir(), 'fleet-dockerfile-'));
afterAll(async () => {
  await rm(temp, { recursive: true, force: true });
});

describe('deploy/Dockerfile: lint', () => {
  it('dockerfile-utils finds no problem', () => {
    expect(validate(text).map((d) => `${d.range.start.line + 1}: ${d.message}`)).toEqual([]);
  });

  it('dockerfile-utils finds the problems planted in a broken copy (not a no-op)', () => {
    const broken = text
      .replace('HEALTHCHECK --interval=10s', 'HEALTHCHECK --interval=ten')
      .replace('EXPOSE 9464', 'EXPOSE metrics')
      .replace('COPY --from=build', 'COPY --form=build');
    const messages = validate(broken).map((d) => d.message);
    expect(messages).toEqual(
      expect.arrayContaining([
        expect.stringMatching(/invalid duration/),
        expect.stringMatching(/Invalid containerPort/),
        expect.stringMatching(/Unknown flag: form/),
      ]),
    );
  });
});

describe('deploy/Dockerfile: base images', () => {
  const images = [...new Set(all.map((s) => s.from))];
  const unpinned = images.filter((image) => !/@sha256:[0-9a-f]{64}$/.test(image));
  for (const image of unpinned)
    console.warn(`deploy/Dockerfile: base image ${image} is not pinned by digest (see the comment there).`);

  for (const image of images) {
    const pinned = !unpinned.includes(image);
    it.skipIf(!pinned)(
      pinned
        ? `pins ${image.split('@')[0]} by digest`
        : `pins ${image} by digest (skipped: not pinned yet; no registry is reachable here to read its digest, and none is guessed: see the comment in deploy/Dockerfile)`,
      () => {
        expect(image).toMatch(/^[\w./-]+:[\w.-]+@sha256:[0-9a-f]{64}$/);
      },
    );
  }

  it('names one base image in every stage, and says in a comment how to pin it while it is not', () => {
    expect(images).toHaveLength(1);
    expect(images[0]).toMatch(/^node:\d+-/);
    if (unpinned.length > 0) {
      expect(text).toMatch(/NOT pinned by digest/);
      expect(text).toContain('docker buildx imagetools inspect');
    }
  });
});

describe('deploy/Dockerfile: runtime stage', () => {
  it('is a multi-stage build whose final stage takes only the built dist/ from the build stage', () => {
    expect(all.length).toBeGreaterThanOrEqual(2);
    const copiesFromBuild = inFinal('COPY').filter((c) => c.args.startsWith('--from='));
    expect(copiesFromBuild.map((c) => c.args)).toEqual([`--from=${all[0]?.name} /app/dist ./dist`]);
  });

  it('installs the production dependencies only: the same line, rehearsed against the lock, adds no dev dependency', async () => {
    const install = inFinal('RUN')
      .flatMap((r) => r.args.split('&&').map((c) => c.trim()))
      .filter((c) => /^npm (install|ci)\b/.test(c));
    expect(install).toHaveLength(1);
    const line = install[0] as string;
    expect(line).toMatch(/--omit=dev/);
    // What the stage has at that point: package.json and the lock.
    const dir = await mkdtemp(join(temp, 'install-'));
    for (const f of ['package.json', 'package-lock.json']) await writeFile(join(dir, f), readFileSync(f));
    const r = await run('npm', [...line.split(/\s+/).slice(1), '--dry-run'], {
      cwd: dir,
      timeoutMs: 120_000,
    });
    expect(r.code, r.output).toBe(0);
    const added = [...r.output.matchAll(/^add (\S+) (\S+)$/gm)].map((m) => `${m[1]}@${m[2]}`);
    const lock = JSON.parse(readFileSync('package-lock.json', 'utf8')) as {
      packages: Record<string, { version?: string; dev?: boolean }>;
    };
    // The lock marks `dev` every copy of a package that only devDependencies need.
    const production = new Set(
      Object.entries(lock.packages)
        .filter(([path, p]) => path && !p.dev)
        .map(
          ([path, p]) =>
            `${path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length)}@${p.version}`,
        ),
    );
    const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as {
      dependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    const names = added.map((a) => a.slice(0, a.lastIndexOf('@')));
    expect(names).toEqual(expect.arrayContaining(Object.keys(manifest.dependencies)));
    expect(added.filter((a) => !production.has(a))).toEqual([]);
    expect(names.filter((name) => name in manifest.devDependencies)).toEqual([]);
  }, 150_000);

  it('listens on 0.0.0.0 inside the container, on the port it exposes', () => {
    expect(finalEnv.FLEET_UPGRADE_LISTEN).toBeTruthy();
    const config = loadDaemonConfig({ env: finalEnv, flags: {}, needApi: false, fileExists: () => false });
    expect(config.listen.host).toBe('0.0.0.0');
    expect(inFinal('EXPOSE').map((e) => e.args)).toEqual([String(config.listen.port)]);
    // The worker takes the image's address over its own host default (127.0.0.1:9465).
    const argv = ['node', 'bin/fleet-upgrade.js', 'worker'];
    expect(healthUrl(argv, finalEnv)).toBe(`http://127.0.0.1:${config.listen.port}/healthz`);
  });

  it('runs as a non-root user, with node bin/fleet-upgrade.js as its entry point', () => {
    expect(inFinal('USER').at(-1)?.args).toBe('1000:1000');
    expect(inFinal('ENTRYPOINT').map((e) => JSON.parse(e.args))).toEqual([['node', 'bin/fleet-upgrade.js']]);
  });

  it('has a HEALTHCHECK that runs node on deploy/healthcheck.mjs, copied where it looks for it', () => {
    const checks = inFinal('HEALTHCHECK');
    expect(checks).toHaveLength(1);
    const cmd = /CMD (\[.*\])$/.exec(checks[0]?.args ?? '')?.[1];
    const [program, script] = JSON.parse(cmd ?? '[]') as string[];
    expect(program).toBe('node');
    const copied = inFinal('COPY')
      .map((c) => c.args.split(/\s+/))
      .find(([source]) => source === 'deploy/healthcheck.mjs');
    expect(copied, 'COPY deploy/healthcheck.mjs').toBeTruthy();
    expect(posix.resolve(workdir, copied?.[1] ?? '')).toBe(posix.resolve(workdir, script ?? ''));
  });

  it('copies only what is in the build context (present, and not left out by .dockerignore)', () => {
    const ignored = readFileSync('.dockerignore', 'utf8')
      .split('\n')
      .map((l) => l.trim().replace(/\/$/, ''))
      .filter((l) => l && !l.startsWith('#'));
    const sources = all
      .flatMap((s) => s.instructions)
      .filter((i) => i.keyword === 'COPY' && !i.args.startsWith('--from='))
      .flatMap((i) => i.args.split(/\s+/).slice(0, -1));
    expect(sources.length).toBeGreaterThan(5);
    for (const source of sources) {
      expect(existsSync(source), source).toBe(true);
      expect(ignored, source).not.toContain(source.split('/')[0]);
    }
  });
});

describe('deploy/healthcheck.mjs', () => {
  afterEach(stopStubServers);

  it('asks /healthz of run and worker at their listen address, /_sim/stats of the simulator', () => {
    const cli = (...args: string[]) => ['node', '/app/bin/fleet-upgrade.js', ...args];
    const env = { FLEET_UPGRADE_LISTEN: '0.0.0.0:9464' };
    expect(healthUrl(cli('run', '--policy', 'p.yaml'), env)).toBe('http://127.0.0.1:9464/healthz');
    expect(healthUrl(cli('run', '--listen', '10.0.0.5:9000'), env)).toBe('http://10.0.0.5:9000/healthz');
    expect(healthUrl(cli('worker', '--listen=[::]:9100'), {})).toBe('http://127.0.0.1:9100/healthz');
    expect(healthUrl(cli('worker'), { ...env, FLEET_UPGRADE_WORKER_LISTEN: '0.0.0.0:9465' })).toBe(
      'http://127.0.0.1:9465/healthz',
    );
    expect(healthUrl(cli('worker'), {})).toBe('http://127.0.0.1:9465/healthz');
    expect(healthUrl(cli('simulate', '--host', '0.0.0.0', '--port', '8080'), env)).toBe(
      'http://127.0.0.1:8080/_sim/stats',
    );
    // Under an init (docker run --init), and for commands that serve nothing.
    expect(healthUrl(['/sbin/docker-init', '--', ...cli('run')], env)).toBe('http://127.0.0.1:9464/healthz');
    expect(healthUrl(cli('simulate'), env)).toBeUndefined();
    expect(healthUrl(cli('status'), env)).toBeUndefined();
    expect(healthUrl(['sh'], env)).toBeUndefined();
  });

  it('is healthy on a 2xx answer only: not on a 503, nor when nothing listens', async () => {
    const ok = await startStubServer((_req, res) => reply(res, 200, { ok: true }));
    const unready = await startStubServer((_req, res) => reply(res, 503, { ok: false }));
    expect(await check(`${ok.url}/healthz`)).toBe(0);
    expect(await check(`${unready.url}/healthz`)).toBe(1);
    const port = new URL(unready.url).port;
    await unready.close();
    expect(await check(`http://127.0.0.1:${port}/healthz`)).toBe(1);
    expect(await check(undefined)).toBe(0);
  });

  it('runs as a plain node script (outside a container, PID 1 is no fleet-upgrade: nothing to ask)', async () => {
    const r = await run(process.execPath, ['deploy/healthcheck.mjs'], { timeoutMs: 10_000 });
    expect(r.code, r.output).toBe(0);
  });
});
