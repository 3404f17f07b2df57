/**
 * The Prometheus metrics of a fleet-upgrade process (prom-client), in a registry of its own.
 * Counters and histograms count what this process did (sum them across processes), but for the
 * outcomes (fleet_upgrade_results_total, fleet_upgrade_health_verdicts_total): those are the tally
 * kept in Redis by the step that writes each move, exported by the leading `run` alone (so a sum
 * across processes still counts each once, and a process's death loses none). The gauges read
 * from Redis are set at scrape time by `run` processes only (take max() across them):
 * fleet-gauges.ts. No label carries a Collector id or a secret.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';
import type { ApiHooks } from '../api/index.js';
import { withTimeout } from '../lib/with-timeout.js';
import {
  countsByMetricState,
  METRIC_STATES,
  type MetricState,
  metricState,
  type OutcomeTally,
} from '../rollout/index.js';
import { type FleetSnapshot, registerFleetGauges } from './fleet-gauges.js';
import { type InventorySnapshot, registerInventoryGauges } from './inventory-gauges.js';

export {
  countsByMetricState,
  type FleetSnapshot,
  type InventorySnapshot,
  METRIC_STATES,
  type MetricState,
  metricState,
};

export interface Metrics {
  registry: Registry;
  tasksCreated: Counter<'rollout' | 'org'>;
  results: Counter<'rollout' | 'org' | 'outcome'>;
  /** What health events decided at verification: `new_event` (unhealthy), `heartbeat_only`. */
  healthVerdicts: Counter<'rollout' | 'org' | 'verdict'>;
  retries: Counter<'reason'>;
  upgradeDuration: Histogram<'outcome'>;
  /** The hooks of the default organization's client (a deployment without `orgs`). */
  apiHooks: ApiHooks;
  /** The hooks of an organization's client: its requests carry its `org` label. */
  apiHooksOf(org: string): ApiHooks;
  /**
   * Makes the Redis-derived gauges read `snapshot()` at every scrape. When Redis cannot be read,
   * they show no series (and fleet_upgrade_redis_up 0) rather than failing the whole scrape.
   */
  exportFleet(snapshot: () => Promise<FleetSnapshot>): void;
  /**
   * Makes the inventory and compliance gauges (inventory-gauges.ts) read `snapshot()` at every
   * scrape; when it cannot be read, they show no series.
   */
  exportInventory(snapshot: () => Promise<InventorySnapshot>): void;
  /**
   * Makes fleet_upgrade_results_total and fleet_upgrade_health_verdicts_total the Redis tally that
   * `read()` answers at every scrape (rollout id → its organizations' figures; an empty map where
   * this process does not lead). A read that fails or is late keeps the values of the last one.
   */
  exportOutcomes(read: () => Promise<ReadonlyMap<string, readonly OutcomeTally[]>>): void;
  /** fleet_upgrade_redis_up: `ping()` at every scrape (1 when it answers in time). */
  watchRedis(ping: () => Promise<boolean>): void;
  /** The API budget in real requests per second (limit × time scale), for the dashboard's limit line. */
  setApiBudget(requestsPerSecond: number, concurrent: number): void;
  /** Webhook attempts by webhook name and outcome: `delivered`, `failed` (retried), `gave_up`. */
  webhookDeliveries: Counter<'webhook' | 'outcome'>;
  /**
   * fleet_upgrade_webhook_pending: `read()` (webhook name → events not yet delivered) at every
   * scrape; a failed read shows no series.
   */
  exportWebhookPending(read: () => Promise<Map<string, number>>): void;
}

export function createMetrics(
  options: { role: 'run' | 'worker' | 'simulate' | 'test' } = { role: 'test' },
): Metrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  new Gauge({
    name: 'fleet_upgrade_process_info',
    help: 'One per fleet-upgrade process, by role.',
    labelNames: ['role'],
    registers: [registry],
  })
    .labels(options.role)
    .set(1);
  const tasksCreated = new Counter({
    name: 'fleet_upgrade_tasks_created_total',
    help: 'Upgrade tasks created, per rollout and organization.',
    labelNames: ['rollout', 'org'],
    registers: [registry],
  });
  // The outcomes' tally in Redis (exportOutcomes), one read per scrape shared by both counters.
  let readTally: (() => Promise<ReadonlyMap<string, readonly OutcomeTally[]> | undefined>) | undefined;
  const fromTally = (fill: (tally: OutcomeTally) => Record<string, number>, label: 'outcome' | 'verdict') =>
    async function collect(this: Counter<'rollout' | 'org' | typeof label>) {
      const tally = await readTally?.();
      if (!tally) return;
      this.reset();
      for (const [rollout, orgs] of tally)
        for (const t of orgs)
          for (const [value, n] of Object.entries(fill(t)))
            this.labels({ rollout, org: t.org, [label]: value } as Record<string, string>).inc(n);
    };
  const results = new Counter({
    name: 'fleet_upgrade_results_total',
    help: 'Collectors that reached an outcome (final, or not_alive), per rollout, organization and outcome: the tally kept in Redis, exported by the leading run alone.',
    labelNames: ['rollout', 'org', 'outcome'],
    registers: [registry],
    collect: fromTally((t) => t.outcomes, 'outcome'),
  });
  const healthVerdicts = new Counter({
    name: 'fleet_upgrade_health_verdicts_total',
    help: "Collectors whose verification the service's health events decided, per rollout, organization and verdict: new_event (a new counted health event during the bake: unhealthy), heartbeat_only (verified by heartbeat alone: a build before 19.308-2, an account without health events, or none read in time). The tally kept in Redis, exported by the leading run alone.",
    labelNames: ['rollout', 'org', 'verdict'],
    registers: [registry],
    collect: fromTally((t) => t.verdicts, 'verdict'),
  });
  const retries = new Counter({
    name: 'fleet_upgrade_retries_total',
    help: 'Retries, by reason: collector_not_alive, rate_limited, server_error, network, error.',
    labelNames: ['reason'],
    registers: [registry],
  });
  for (const reason of ['collector_not_alive', 'rate_limited', 'server_error', 'network', 'error'])
    retries.labels(reason).inc(0);
  const upgradeDuration = new Histogram({
    name: 'fleet_upgrade_upgrade_duration_seconds',
    help: 'From task request to final status, by outcome.',
    labelNames: ['outcome'],
    buckets: [30, 60, 120, 180, 300, 450, 600, 900, 1200, 1800, 2400, 3600],
    registers: [registry],
  });
  const apiRequests = new Counter({
    name: 'fleet_upgrade_api_requests_total',
    help: 'HTTP requests to the Collector Upgrade Service, by organization, endpoint and status code (0 = no answer).',
    labelNames: ['org', 'endpoint', 'code'],
    registers: [registry],
  });
  const apiDuration = new Histogram({
    name: 'fleet_upgrade_api_request_duration_seconds',
    help: 'Duration of one HTTP request to the service, by endpoint (budget waits excluded).',
    labelNames: ['endpoint'],
    buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
    registers: [registry],
  });
  const rateLimited = new Counter({
    name: 'fleet_upgrade_api_rate_limited_total',
    help: 'Answers 429 (rate limit exceeded) from the service, by organization.',
    labelNames: ['org'],
    registers: [registry],
  });
  const budgetWait = new Counter({
    name: 'fleet_upgrade_api_budget_wait_seconds_total',
    help: 'Time spent waiting for the shared API budget before sending.',
    registers: [registry],
  });

  /** Each organization's 429 counter starts at 0 with its hooks, so that rate() sees its first 429. */
  const apiHooksOf = (org: string): ApiHooks => {
    rateLimited.labels(org).inc(0);
    return {
      onAttempt(e) {
        apiRequests.labels(org, e.endpoint, String(e.statusCode ?? 0)).inc();
        apiDuration.labels(e.endpoint).observe(e.durationMs / 1000);
        budgetWait.inc(e.budgetWaitMs / 1000);
        if (e.rateLimited) rateLimited.labels(org).inc();
      },
    };
  };
  const apiHooks = apiHooksOf('default');

  const budgetRate = new Gauge({
    name: 'fleet_upgrade_api_budget_requests_per_second',
    help: "The API budget of this process, in real requests per second (the service's limit times the time scale).",
    registers: [registry],
  });
  const budgetConcurrent = new Gauge({
    name: 'fleet_upgrade_api_budget_concurrent_requests',
    help: 'The API budget of this process: requests under way at once.',
    registers: [registry],
  });

  const webhookDeliveries = new Counter({
    name: 'fleet_upgrade_webhook_deliveries_total',
    help: 'Webhook notification attempts, by webhook (its name in the settings) and outcome: delivered, failed (will be retried), gave_up.',
    labelNames: ['webhook', 'outcome'],
    registers: [registry],
  });
  const webhookPendingSources: (() => Promise<Map<string, number>>)[] = [];

  /** Removes the series of counters labelled with rollouts that no longer exist. */
  async function forgetSeries(counter: Counter<string>, keep: ReadonlySet<string>) {
    for (const v of (await counter.get()).values) {
      const rollout = v.labels.rollout;
      if (typeof rollout === 'string' && !keep.has(rollout)) counter.remove(v.labels);
    }
  }
  const forgetRollouts = (keep: ReadonlySet<string>) => {
    void forgetSeries(tasksCreated, keep);
  };

  const metrics: Metrics = {
    webhookDeliveries,
    exportWebhookPending(read) {
      webhookPendingSources.push(read);
      if (webhookPendingSources.length > 1) return;
      new Gauge({
        name: 'fleet_upgrade_webhook_pending',
        help: 'Events recorded but not yet delivered (or skipped by its event filter), per webhook.',
        labelNames: ['webhook'],
        registers: [registry],
        async collect() {
          this.reset();
          for (const source of webhookPendingSources) {
            const counts = await withTimeout(
              source().catch(() => new Map<string, number>()),
              1000,
              () => new Map<string, number>(),
            );
            for (const [webhook, n] of counts) this.labels(webhook).set(n);
          }
        },
      });
    },
    setApiBudget(rate, concurrent) {
      budgetRate.set(rate);
      budgetConcurrent.set(concurrent);
    },
    exportOutcomes(read) {
      readTally = oncePerScrape(() =>
        withTimeout(
          read().catch(() => undefined),
          1000,
          () => undefined,
        ),
      );
    },
    watchRedis(ping) {
      new Gauge({
        name: 'fleet_upgrade_redis_up',
        help: 'Whether Redis answered a PING within a second at this scrape (1) or not (0).',
        registers: [registry],
        async collect() {
          const up = await withTimeout(
            ping().catch(() => false),
            1000,
            () => false,
          );
          this.set(up ? 1 : 0);
        },
      });
    },
    registry,
    tasksCreated,
    results,
    healthVerdicts,
    retries,
    upgradeDuration,
    apiHooks,
    apiHooksOf,
    exportFleet(snapshot) {
      const read = oncePerScrape(() => snapshot().catch((): FleetSnapshot => ({ rollouts: [], queue: {} })));
      registerFleetGauges(registry, read, forgetRollouts);
    },
    exportInventory(snapshot) {
      const read = oncePerScrape(() =>
        withTimeout(
          snapshot().catch((): InventorySnapshot => ({ now: 0, orgs: [] })),
          1000,
          (): InventorySnapshot => ({ now: 0, orgs: [] }),
        ),
      );
      registerInventoryGauges(registry, read);
    },
  };
  return metrics;
}

/**
 * One Redis read per scrape, shared by every metric of it: a call while a read is under way, or
 * within 200 ms of its end, gets that read's answer.
 */
function oncePerScrape<T>(read: () => Promise<T>): () => Promise<T> {
  let pending: Promise<T> | undefined;
  return () => {
    pending ??= read().finally(() => {
      setTimeout(() => {
        pending = undefined;
      }, 200);
    });
    return pending;
  };
}
