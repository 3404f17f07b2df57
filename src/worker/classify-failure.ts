/**
 * The cause of a failed upgrade, read from the service's failure message, and what the policy
 * does about it (policy/failure-causes.ts). Pure: the same message and policy give the same class.
 *
 * Order: the policy's patterns first, in the order written, then the built-in ones class by class
 * in the order `upgrades_disabled`, `disk_space`, `permission`, `network`, so that the more
 * specific cause wins when a message names two ("not permitted: disableUpgrade=true" is
 * upgrades_disabled, "could not download: no space left on device" is disk_space); no match is
 * `unknown`. Only the message's first 2,000 characters are matched (MESSAGE_LIMIT): causes are
 * named early, and the cap bounds the time of any pattern (see policy/select/check-safe-pattern.ts).
 */
import {
  BUILTIN_FAILURE_CLASSES,
  type BuiltinFailureClass,
  compileFailurePattern,
  DEFAULT_FAILURE_ACTIONS,
  type FailureAction,
  type FailureCauses,
  type FailurePattern,
} from '../policy/failure-causes.js';

export { BUILTIN_FAILURE_CLASSES, type BuiltinFailureClass } from '../policy/failure-causes.js';

/** Characters of a message that are matched. */
export const MESSAGE_LIMIT = 2000;

const UPGRADES_DISABLED: readonly RegExp[] = [
  /\bdisable[_ -]?(?:remote[_ -]?)?upgrades?\b/i, // disableUpgrade=true, disable_upgrade, "disable upgrade"
  /\b(?:remote |automatic )?(?:upgrades?|downgrades?)(?: (?:is|are|has been|have been))? (?:disabled|turned off|not (?:allowed|permitted|enabled))\b/i,
  /\bremote (?:upgrades?|downgrades?|updates?|management) (?:is |are )?(?:disabled|turned off|not (?:allowed|permitted|enabled))\b/i,
  /\b(?:refuses?|refused|rejects?|rejected|does not accept|doesn't accept) (?:the )?remote (?:upgrades?|downgrades?)\b/i,
  /\b(?:does not|doesn't|not|never) (?:to )?allow(?:s|ed)? (?:remote )?(?:upgrades?|downgrades?)\b/i,
];

const DISK_SPACE: readonly RegExp[] = [
  /\bno (?:free )?space left\b/i, // ENOSPC: "No space left on device"
  /\b(?:not enough|insufficient|low|out of|no) (?:free )?(?:disk |storage )?space\b/i,
  /\b(?:insufficient|out of|low on) (?:disk|storage)\b/i,
  /\bdisk space\b/i,
  /\b(?:disk|drive|volume|file ?system|partition|device) (?:is )?full\b/i,
  /\b(?:disk|drive|volume|file ?system|partition|device)\b[^.;\n]{0,40}\bis full\b/i, // "Volume /var is full"
  /\bdisk quota\b/i, // EDQUOT: "Disk quota exceeded"
  /\benospc\b|\berror_disk_full\b|\b0x80070070\b/i, // errno, Win32 error, HRESULT
];

const PERMISSION: readonly RegExp[] = [
  /\bpermissions? (?:denied|error|problem|issue|missing)\b/i,
  /\b(?:insufficient|missing|lacks?|lacking|without|no|not enough) (?:the )?(?:required |necessary )?(?:permissions?|privileges?|rights|access rights)\b/i,
  /\baccess (?:is )?denied\b|\baccess to the path\b/i, // Windows, .NET
  /\b(?:operation|action) not permitted\b/i, // EPERM
  /\beacces\b|\beperm\b|\berror_access_denied\b|\b0x80070005\b/i,
  /\b(?:requires?|must be run as|run as|needs?) (?:an? )?(?:root|administrator|admin|elevated|superuser)\b/i,
  /\b(?:administrator|admin|root|elevated|superuser) (?:privileges?|rights|permissions?)\b/i,
  /\bread-only file ?system\b|\berofs\b/i,
  /\b(?:selinux|apparmor)\b/i,
];

const NETWORK: readonly RegExp[] = [
  /\b(?:could not|couldn't|cannot|can't|unable to|failed to|failure to|error) (?:while )?(?:download|fetch|retriev|connect|reach|resolv|contact)/i,
  /\bdownload(?:ing)? (?:the )?(?:package |installer |file )?(?:failed|error|timed? ?out|interrupted|aborted|incomplete)\b/i,
  /\b(?:error|failure) (?:while |when )?(?:downloading|connecting|fetching)\b/i,
  /\btimed? ?out (?:while |when )?(?:downloading|connecting|fetching|resolving|contacting|reading from|waiting for (?:the )?(?:server|response|connection))\b/i,
  /\b(?:connection|connect|read|socket|download|request|handshake|dns|network|gateway) (?:timed? ?out|time-?out)\b/i,
  /\bconnection (?:was )?(?:reset|refused|closed|aborted|lost|dropped|failed|error|interrupted)\b|\breset by peer\b/i,
  /\b(?:econnreset|econnrefused|econnaborted|etimedout|enetunreach|ehostunreach|enotfound|eai_again|epipe)\b/i,
  /\bdns\b|\bname (?:resolution|or service not known)\b|\b(?:unknown|no such) host\b/i,
  /\b(?:host|network|server) (?:is )?unreachable\b|\bnetwork\b/i,
  /\b(?:tls|ssl|handshake|x509)\b|\bcertificate (?:verify|verification|validation|has expired|expired|is not trusted|error)/i,
  /\bproxy\b|\bsocket hang up\b|\bbad gateway\b|\bgateway time-?out\b/i,
  /\b(?:checksum|hash) mismatch\b|\bcorrupt(?:ed)? download\b/i,
];

/** The built-in patterns, in the order they are tried. */
export const BUILTIN_PATTERNS: readonly { class: BuiltinFailureClass; regex: RegExp }[] = [
  ...UPGRADES_DISABLED.map((regex) => ({ class: 'upgrades_disabled' as const, regex })),
  ...DISK_SPACE.map((regex) => ({ class: 'disk_space' as const, regex })),
  ...PERMISSION.map((regex) => ({ class: 'permission' as const, regex })),
  ...NETWORK.map((regex) => ({ class: 'network' as const, regex })),
];

// Compiled policy patterns by source; a refused or invalid one is kept as null and never matches.
const compiled = new Map<string, RegExp | null>();
function compiledPattern(match: string): RegExp | null {
  let regex = compiled.get(match);
  if (regex === undefined) {
    const result = compileFailurePattern(match);
    regex = result instanceof RegExp ? result : null;
    if (compiled.size >= 1000) compiled.clear();
    compiled.set(match, regex);
  }
  return regex;
}

/**
 * The class of a failure message: the class of the first of the policy's `patterns` that
 * matches, else of the first built-in pattern that matches, else `unknown` (also for a missing
 * or empty message). Patterns are case-insensitive and see the first MESSAGE_LIMIT characters.
 */
export function classifyFailure(
  message: string | undefined,
  patterns: readonly FailurePattern[] = [],
): string {
  if (!message) return 'unknown';
  const text = message.length > MESSAGE_LIMIT ? message.slice(0, MESSAGE_LIMIT) : message;
  for (const pattern of patterns) {
    if (compiledPattern(pattern.match)?.test(text)) return pattern.class;
  }
  for (const builtin of BUILTIN_PATTERNS) {
    if (builtin.regex.test(text)) return builtin.class;
  }
  return 'unknown';
}

/**
 * What the policy does with a failure of `failureClass`: its action in `causes.actions` (which
 * holds every built-in class, defaults filled in), else the action of `unknown`.
 */
export function actionFor(failureClass: string, causes: FailureCauses): FailureAction {
  return causes.actions[failureClass] ?? causes.actions.unknown ?? DEFAULT_FAILURE_ACTIONS.unknown;
}

/** True for the classes the classifier knows without a policy. */
export function isBuiltinFailureClass(name: string): name is BuiltinFailureClass {
  return (BUILTIN_FAILURE_CLASSES as readonly string[]).includes(name);
}
