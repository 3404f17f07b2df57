/**
 * `upgrade --server URL`: the one-off asked of a daemon's `POST /upgrades` (http/post-upgrade.ts)
 * as the person of FLEET_UPGRADE_TOKEN (server-client.ts). The daemon checks the build and the
 * Collectors with its own client of the organization's service; its answer (201, or 409 when no
 * Collector is left to upgrade: nothing written) says what it found of each named Collector, and
 * becomes the same outcome as the command's on Redis, printed by the same lines with the same exit
 * codes (upgrade.ts). A build the service does not offer, an organization the daemon's settings
 * do not name: 400, exit 64, its message naming the command's flag (`--to`, `--org`) as the
 * command does on Redis. 401/403: exit 77. The answer is checked (zod) and bounded.
 */
import { z } from 'zod';
import { DEFAULT_ORG, ONE_OFF_MAX_COLLECTORS } from '../../rollout/index.js';
import { askServer, refusalOf, refusalOfAnswer, type ServerTarget } from './server-client.js';

/** Findings of 10,000 Collectors with their sentences: well under this. */
const ANSWER_LIMIT = 8_000_000;

const Finding = z.enum(['hosted', 'unknown', 'offline', 'current']);

/** What `POST /upgrades` answers (201), and its 409 beside `error`. */
const OneOffAnswer = z.object({
  oneOff: z.string().max(200).optional(),
  rollout: z.string().max(400).optional(),
  collectors: z.array(z.number()).max(ONE_OFF_MAX_COLLECTORS).optional(),
  org: z.string().max(200),
  build: z.string().max(200),
  named: z
    .array(z.object({ id: z.number(), finding: Finding, message: z.string().max(2000) }))
    .max(ONE_OFF_MAX_COLLECTORS),
  unchecked: z.string().max(2000).optional(),
});

/** What became of a one-off, wherever it was asked: what `upgrade` prints and exits with. */
export interface OneOffOutcome {
  /** ` of org NAME`, or nothing for the only, unnamed organization. */
  ofOrg: string;
  /** One sentence per named Collector left out or only named (stderr). */
  lines: string[];
  /** The build the service named (`latest` resolved); undefined: it could not be asked. */
  build?: string;
  findings: ReadonlyMap<number, z.infer<typeof Finding>>;
  /** Why the service could not be asked. */
  unchecked?: string;
  /** The one-off's name; undefined: nothing written. */
  name?: string;
  /** The Collectors it upgrades. */
  kept: number;
  /** Some named Collectors are hosted or unknown there (exit 2). */
  notUpgradable: boolean;
}

export interface OneOffAsk {
  collectors: number[];
  to: string;
  allowDowngrade: boolean;
  maxInFlight?: number;
  org?: string;
}

/** The API's field names, in a refusal's message, as the command's flags. */
function asFlags(message: string): string {
  return message.replace(/^(to|org)(:| is required)/, '--$1$2');
}

export async function upgradeThroughServer(server: ServerTarget, ask: OneOffAsk): Promise<OneOffOutcome> {
  const answer = await askServer(server, 'POST', '/upgrades', {
    body: {
      collectors: ask.collectors,
      to: ask.to,
      allowDowngrade: ask.allowDowngrade,
      ...(ask.maxInFlight === undefined ? {} : { maxInFlight: ask.maxInFlight }),
      ...(ask.org === undefined ? {} : { org: ask.org }),
    },
    limit: ANSWER_LIMIT,
  });
  if (answer.status !== 201 && answer.status !== 409) {
    const refusal = refusalOfAnswer(answer);
    throw answer.status === 400 ? refusalOf(400, asFlags(refusal.message)) : refusal;
  }
  const parsed = OneOffAnswer.safeParse(answer.json);
  if (!parsed.success) {
    // A 409 of another shape (an older daemon): its message, exit 3.
    if (answer.status === 409) throw refusalOfAnswer(answer);
    throw refusalOf(502, `POST /upgrades answered what is not a one-off: ${parsed.error.issues[0]?.message}`);
  }
  const said = parsed.data;
  const findings = new Map(said.named.map((n) => [n.id, n.finding] as const));
  return {
    ofOrg: said.org === DEFAULT_ORG ? '' : ` of org ${said.org}`,
    lines: said.named.map((n) => n.message),
    // A one-off's `build` is the one asked when the service could not be asked: `rollout` (the
    // id, known once the build is) says it could. A 409's is only said (`build ?? to`).
    ...(said.rollout !== undefined || answer.status === 409 ? { build: said.build } : {}),
    findings,
    ...(said.unchecked ? { unchecked: said.unchecked } : {}),
    ...(answer.status === 201 && said.oneOff ? { name: said.oneOff } : {}),
    kept: said.collectors?.length ?? 0,
    notUpgradable: said.named.some((n) => n.finding === 'hosted' || n.finding === 'unknown'),
  };
}
