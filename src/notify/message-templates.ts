/**
 * The sentence a Slack, Teams or PagerDuty message leads with, per event type: a template whose
 * `{field}` placeholders are filled from a small, fixed set of facts (TEMPLATE_FIELDS). No code
 * runs: a template is text and placeholders, an unknown placeholder is refused when the settings
 * are read, and each value is cut to MAX_FIELD_CHARS. `fleet-upgrade notify --print` prints the
 * defaults; the settings' `templates:` of a receiver override them per event type.
 */
import type { RolloutEventType } from '../rollout/index.js';
import { ROLLOUT_EVENT_TYPES } from '../rollout/index.js';

/** The placeholders a template may use, with what they hold (printed by `notify --print`). */
export const TEMPLATE_FIELDS = {
  message: 'the sentence the CLI prints for the event (`history`)',
  rollout: 'the rollout: policy@build',
  policy: 'the policy',
  build: 'the build',
  orgs: 'the organization(s) it concerns, comma-separated',
  actor: 'who acted (user@host, http:<address>), or "fleet-upgrade" when no operator did',
  type: 'the event type',
  at: 'when it was recorded (ISO 8601, UTC)',
  progress: 'the counts by state, or the wave (wave 2 of 4), when the event has them',
  count: 'a summary: Collectors that failed in the window',
  causes: 'a summary: the top causes (failed, timed_out, error) with their counts',
  rollouts: 'a summary: the rollouts it covers, comma-separated',
} as const;
export type TemplateField = keyof typeof TEMPLATE_FIELDS;

/** A value filled in is cut to this many characters (a template cannot grow a message beyond). */
export const MAX_FIELD_CHARS = 500;
/** The longest template accepted. */
export const MAX_TEMPLATE_CHARS = 1000;

const PLACEHOLDER = /\{([A-Za-z_]+)\}/g;

/** The default template of each event type: the CLI's sentence; a summary for failures. */
export const DEFAULT_TEMPLATES: Readonly<Record<RolloutEventType, string>> = Object.fromEntries(
  ROLLOUT_EVENT_TYPES.map((t) => [
    t,
    t === 'collectors.failed'
      ? '{count} Collectors failed in {orgs} ({rollouts}); top causes: {causes}'
      : '{message}',
  ]),
) as Record<RolloutEventType, string>;

/** The placeholders of `template` that are not in TEMPLATE_FIELDS (empty: it is valid). */
export function unknownPlaceholders(template: string): string[] {
  const out: string[] = [];
  for (const m of template.matchAll(PLACEHOLDER)) {
    const name = m[1] as string;
    if (!Object.hasOwn(TEMPLATE_FIELDS, name)) out.push(name);
  }
  return out;
}

/** `template` with each `{field}` replaced by its value (empty when the event has none). */
export function fillTemplate(template: string, values: Partial<Record<TemplateField, string>>): string {
  return template.replace(PLACEHOLDER, (whole, name: string) => {
    if (!Object.hasOwn(TEMPLATE_FIELDS, name)) return whole;
    const value = values[name as TemplateField] ?? '';
    return value.length > MAX_FIELD_CHARS ? `${value.slice(0, MAX_FIELD_CHARS - 1)}…` : value;
  });
}
