/**
 * What a Slack, Teams or PagerDuty message says, from one event or a summary of several: a title,
 * the leading sentence (the receiver's template filled in), the fields (policy, organization(s),
 * build, progress, who acted) and a context line. The shapes of each service are built from this
 * in slack-message.ts, teams-card.ts and pagerduty-event.ts.
 */
import { fillTemplate, type TemplateField } from './message-templates.js';
import type { Receiver } from './receiver.js';
import type { OutboxEvent } from './schema.js';

/** An event with the organizations it concerns (its own `detail.org`, else its rollout's). */
export interface RoutedEvent {
  event: OutboxEvent;
  orgs: readonly string[];
}

export interface MessageFacts {
  title: string;
  text: string;
  fields: { label: string; value: string }[];
  context: string;
  /** The event the message is about (the newest of a summary). */
  event: OutboxEvent;
  orgs: readonly string[];
  /** A summary: the events it covers. */
  covers: number;
  /** The rollout in the deployment's HTTP API, when the settings name `publicUrl` (one rollout). */
  link?: string;
}

const TITLES: Record<string, string> = {
  'rollout.halted': 'Rollout halted',
  'rollout.awaiting_approval': 'Rollout awaiting approval',
  'rollout.converged': 'Rollout converged',
  'rollout.paused': 'Rollout paused',
  'rollout.resumed': 'Rollout resumed',
  'rollout.aborted': 'Rollout aborted',
  'rollout.started': 'Rollout started',
  'collectors.failed': 'Collectors failed',
  'cohort.quarantined': 'Cohort quarantined',
  'org.waiting': 'Organization waiting',
  'org.recovered': 'Organization recovered',
  'daemon.problem': 'Daemon problem',
  'daemon.problem_ended': 'Daemon problem over',
};

/** `rollout.awaiting_approval` → `Rollout awaiting approval`, unless named in TITLES. */
export function titleOf(type: string): string {
  const known = TITLES[type];
  if (known) return known;
  const words = type.replace(/[._]/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

const detailOf = (e: OutboxEvent): Record<string, unknown> =>
  typeof e.detail === 'object' && e.detail !== null ? (e.detail as Record<string, unknown>) : {};

/** `12 succeeded, 3 failed` from a counts object, or `wave 2 of 4`, or ''. */
function progressOf(e: OutboxEvent): string {
  const d = detailOf(e);
  const counts = d.counts;
  if (typeof counts === 'object' && counts !== null) {
    const parts = Object.entries(counts as Record<string, unknown>)
      .filter(([, n]) => typeof n === 'number' && n > 0)
      .map(([s, n]) => `${n} ${s}`);
    if (parts.length) return parts.join(', ');
  }
  if (typeof d.wave === 'number' && typeof d.of === 'number') return `wave ${d.wave} of ${d.of}`;
  return '';
}

const countsIn = (v: unknown): Record<string, unknown> | undefined =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;

/**
 * The causes of a failures summary: the failure classes (`byClass`: disk_space, network, …) of
 * the newest event of each rollout, summed, largest first (ties by name); an event recorded
 * before events carried classes gives its end states (`byState`).
 */
function causesOf(batch: readonly RoutedEvent[]): { count: number; causes: string } {
  let count = 0;
  const latest = new Map<string, Record<string, unknown>>();
  for (const { event } of batch) {
    const d = detailOf(event);
    count += typeof d.new === 'number' ? d.new : 0;
    const by = countsIn(d.byClass) ?? countsIn(d.byState);
    if (by) latest.set(event.rollout, by);
  }
  const sum = new Map<string, number>();
  for (const by of latest.values())
    for (const [state, n] of Object.entries(by))
      if (typeof n === 'number') sum.set(state, (sum.get(state) ?? 0) + n);
  const top = [...sum.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 3);
  return { count, causes: top.map(([s, n]) => `${n} ${s}`).join(', ') || 'none recorded' };
}

const unique = (values: Iterable<string>): string[] => [...new Set(values)];

/** The facts of the message for `batch` (oldest first; one event unless a summary). */
export function messageFacts(receiver: Receiver, batch: readonly RoutedEvent[]): MessageFacts {
  const last = batch[batch.length - 1] as RoutedEvent;
  const e = last.event;
  const orgs = unique(batch.flatMap((b) => b.orgs));
  const rollouts = unique(batch.map((b) => b.event.rollout));
  const actor = typeof e.actor === 'string' && e.actor ? e.actor : '';
  const at = typeof e.at === 'number' ? new Date(e.at).toISOString() : '';
  const values: Partial<Record<TemplateField, string>> = {
    message: e.message,
    rollout: e.rollout,
    policy: String(e.policy ?? ''),
    build: String(e.build ?? ''),
    orgs: orgs.join(', '),
    actor: actor || 'fleet-upgrade',
    type: e.type,
    at,
    progress: progressOf(e),
    rollouts: rollouts.join(', '),
  };
  if (e.type === 'collectors.failed') {
    const c = causesOf(batch);
    values.count = String(c.count);
    values.causes = c.causes;
  }
  const template = receiver.templates[e.type as keyof Receiver['templates']] ?? '{message}';
  const fields = [
    { label: 'Policy', value: unique(batch.map((b) => String(b.event.policy ?? ''))).join(', ') },
    { label: orgs.length > 1 ? 'Organizations' : 'Organization', value: values.orgs ?? '' },
    { label: 'Build', value: unique(batch.map((b) => String(b.event.build ?? ''))).join(', ') },
    { label: 'Progress', value: values.progress ?? '' },
    { label: 'Who acted', value: actor },
  ].filter((f) => f.value !== '');
  const link =
    receiver.publicUrl && rollouts.length === 1
      ? `${receiver.publicUrl}/rollouts/${encodeURIComponent(e.rollout)}`
      : undefined;
  return {
    ...(link ? { link } : {}),
    title: batch.length > 1 ? `${titleOf(e.type)} (${batch.length} reports)` : titleOf(e.type),
    text: fillTemplate(template, values),
    fields,
    context: `${e.type} · ${rollouts.join(', ')} · ${at} · fleet-upgrade`,
    event: e,
    orgs,
    covers: batch.length,
  };
}
