/**
 * A `notify:` receiver as delivery sees it (a Slack, Teams or PagerDuty target on the outbox): its
 * kind, its routing (organizations, policies), its summary window and its templates.
 */
import type { RolloutEventType } from '../rollout/index.js';
import type { PagerDutySeverity, ReceiverKind } from './schema.js';
import type { Secret } from './secret.js';

/** PagerDuty's Events API v2 endpoint (developer.pagerduty.com, "Send an Alert Event"). */
export const PAGERDUTY_EVENTS_URL = 'https://events.pagerduty.com/v2/enqueue';

/** The default window in which per-Collector events become one summary. */
export const DEFAULT_WINDOW_MS = 60_000;

export interface Receiver {
  kind: ReceiverKind;
  /** Only rollouts that cover one of these organizations (absent: any). */
  orgs?: ReadonlySet<string>;
  /** Only these policies (absent: any). */
  policies?: ReadonlySet<string>;
  /** Real ms in which per-Collector events become one summary, and a resolve waits for a relapse. */
  windowMs: number;
  /** The leading sentence per event type: the defaults with the settings' overrides. */
  templates: Readonly<Record<RolloutEventType, string>>;
  /** PagerDuty: the integration's routing key (sent in the body, never logged). */
  routingKey?: Secret;
  /** PagerDuty: payload.severity of what it triggers. */
  severity: PagerDutySeverity;
  /** The settings' `publicUrl` (no trailing slash): messages link to `<publicUrl>/rollouts/<id>`. */
  publicUrl?: string;
}

/** The consumer group of a receiver on the outbox (apart from the webhooks' `webhook:<name>`). */
export const receiverGroup = (name: string): string => `notify:${name}`;
