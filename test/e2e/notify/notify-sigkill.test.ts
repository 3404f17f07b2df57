/**
 * Notifications across a SIGKILL of the real daemon (the built CLI, `run` with a webhook in its
 * settings file): events are recorded, the daemon reads them and is killed while the receiver has
 * not answered; more events are recorded while no daemon runs; a second `run` delivers every event
 * of the outbox, each with a valid signature. None is lost.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { webhookGroup } from '../../../src/notify/start-notifier.js';
import type { RecordedEvent, RolloutEventType } from '../../../src/rollout/index.js';
import { EventRecorder } from '../../support/event-recorder.js';
import { exitOf, type Harness, startHarness } from '../../support/rollout-harness.js';
import { waitUntil } from '../../support/wait-until.js';
import { startWebhookReceiver, type WebhookReceiver } from '../../support/webhook-receiver.js';

let harness: Harness | undefined;
let receiver: WebhookReceiver | undefined;
let dir: string | undefined;

afterEach(async () => {
  await harness?.close();
  await receiver?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  harness = undefined;
  receiver = undefined;
  dir = undefined;
});

describe('a daemon killed with SIGKILL', () => {
  it('loses no notification: the next `run` delivers every event of the outbox, signed', async () => {
    const h = await startHarness({
      fleet: {
        builds: ['19.400-5', '19.470-4'],
        users: [{ accessId: 'ops', accessKey: 'ops-secret' }],
        generate: { count: 5, seed: 7, hostedRatio: 0, offlineRatio: 0, upToDateRatio: 0 },
        behaviour: { upgradeSeconds: { median: 60, p95: 90 }, failureRatio: 0, stuckRatio: 0 },
        seed: 7,
      },
      timeScale: 300,
      policy: { name: 'notified', maxInFlight: 5 },
    });
    harness = h;
    const r = await startWebhookReceiver();
    receiver = r;
    dir = mkdtempSync(join(tmpdir(), 'notify-sigkill-'));
    const settings = join(dir, 'fleet-upgrade.yaml');
    writeFileSync(
      settings,
      stringify({
        webhooks: [
          {
            name: 'ops',
            url: `${r.url}/hooks/fleet?channel=ops`,
            secretEnv: 'TEST_WEBHOOK_SECRET',
            timeout: '30s',
            retry: { initial: '100ms', max: '500ms' },
          },
        ],
      }),
    );
    const secret = 'whsec-e2e-7f3a9c';
    h.env.TEST_WEBHOOK_SECRET = secret;
    const args = ['run', '--config', settings, '--policy', h.policyFile, '--listen', '127.0.0.1:0'];

    // The first request is never answered: the daemon is killed while it holds the events.
    r.answer = (_req, n) => (n === 1 ? 'hang' : 200);
    const first = h.spawnCli(args);
    const groupExists = async () => {
      const groups = (await h.redis.xinfo('GROUPS', h.keys.outbox).catch(() => [])) as unknown[][];
      return groups.some((g) => g.includes(webhookGroup('ops')));
    };
    await waitUntil(groupExists, 30_000, `the daemon's webhook group; output: ${first.output()}`, 50);
    const log = new EventRecorder(h.redis, h.keys);
    const record = (type: RolloutEventType, actor?: string): Promise<RecordedEvent> =>
      log.record({
        type,
        rollout: 'notified@19.470-4',
        policy: 'notified',
        build: '19.470-4',
        at: Date.now(),
        source: actor ? 'operator' : 'scheduler',
        ...(actor ? { actor } : {}),
        message: `${type} (test)`,
      });
    const mine = [await record('rollout.paused', 'ops@host'), await record('rollout.resumed', 'ops@host')];
    await r.waitForRequests(1, 20_000);
    mine.push(await record('rollout.halted'));
    first.kill('SIGKILL');
    await exitOf(first, 10_000);
    // Recorded while no daemon runs (as `pause` from the CLI would).
    mine.push(await record('rollout.paused', 'ops@host'));

    const second = h.spawnCli(args);
    const outboxIds = async () =>
      (await h.redis.xrange(h.keys.outbox, '-', '+')).map(
        ([, fields]) => (JSON.parse(fields[fields.indexOf('event') + 1] as string) as RecordedEvent).id,
      );
    await waitUntil(
      async () => {
        const delivered = new Set(r.delivered());
        return (await outboxIds()).every((id) => delivered.has(id));
      },
      30_000,
      `every event of the outbox delivered; output: ${second.output()}`,
      50,
    );
    const delivered = new Set(r.delivered());
    for (const e of mine) expect(delivered.has(e.id), e.type).toBe(true);
    for (const req of r.requests.filter((q) => q.status === 200)) {
      expect(req.path).toBe('/hooks/fleet?channel=ops');
      expect(r.signedWith(req, secret), req.eventId).toBe(true);
      expect(JSON.parse(req.body).id).toBe(req.eventId);
    }
    expect(r.requests[0]?.status).toBe(0); // the killed daemon's attempt got no answer
    // No log line of either process carries the secret or the URL's path or query.
    for (const out of [first.output(), second.output()]) {
      expect(out).not.toContain(secret);
      expect(out).not.toContain('channel=ops');
      expect(out).not.toContain('/hooks/fleet');
    }
    second.kill('SIGTERM');
    expect(await exitOf(second, 15_000)).toBe(0);
  }, 90_000);
});
