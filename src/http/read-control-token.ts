/**
 * The control token of the HTTP API, resolved from the environment (`FLEET_UPGRADE_CONTROL_TOKEN`,
 * or `FLEET_UPGRADE_CONTROL_TOKEN_FILE`) or the settings file's `controlTokenFile` (never the
 * token itself in the file: its schema refuses `controlToken:`). A pure function of its inputs;
 * every problem names where the token came from, and none repeats the token.
 */
import type { SourceIssue } from '../lib/errors.js';
import { ControlToken } from './authorize-request.js';

/** A shorter token can be guessed; `openssl rand -hex 32` makes a good one. */
export const MIN_TOKEN_LENGTH = 16;

export interface ReadControlTokenInput {
  env: NodeJS.ProcessEnv;
  /** The settings file's `controlTokenFile`. */
  fileField: string | undefined;
  /** The settings file, for error messages. */
  settingsFile: string;
  readFile: (path: string) => string;
  /** Line and column of the settings file's field, when known. */
  locate?: (path: readonly PropertyKey[]) => { line: number; column: number } | undefined;
}

export function readControlToken(input: ReadControlTokenInput): {
  token?: ControlToken;
  issues: SourceIssue[];
} {
  const { env } = input;
  const issues: SourceIssue[] = [];
  const inline = env.FLEET_UPGRADE_CONTROL_TOKEN?.trim();
  const envFile = env.FLEET_UPGRADE_CONTROL_TOKEN_FILE?.trim();
  const fromEnv = (field: string, reason: string) => issues.push({ file: 'environment', field, reason });
  const fromSettings = (reason: string) => {
    const pos = input.locate?.(['controlTokenFile']);
    issues.push({
      file: input.settingsFile,
      line: pos?.line,
      column: pos?.column,
      field: 'controlTokenFile',
      reason,
    });
  };
  let text: string | undefined;
  let problem: (reason: string) => void;
  let path: string | undefined;
  if (inline && envFile) {
    fromEnv(
      'FLEET_UPGRADE_CONTROL_TOKEN',
      'and FLEET_UPGRADE_CONTROL_TOKEN_FILE are both set; set only one of them',
    );
    return { issues };
  }
  if (inline) {
    text = inline;
    problem = (reason) => fromEnv('FLEET_UPGRADE_CONTROL_TOKEN', reason);
  } else if (envFile || input.fileField) {
    path = (envFile || input.fileField) as string;
    problem = envFile ? (reason) => fromEnv('FLEET_UPGRADE_CONTROL_TOKEN_FILE', reason) : fromSettings;
    try {
      text = input.readFile(path);
    } catch (err) {
      problem(`cannot read ${path} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`);
      return { issues };
    }
  } else {
    return { issues };
  }
  // A mounted secret usually ends in a newline.
  const token = text.trim();
  const what = path === undefined ? 'the token' : `${path}: the token`;
  if (!token) problem(path === undefined ? 'is empty' : `${path} is empty`);
  else if (!/^[\x21-\x7e]+$/.test(token))
    problem(`${what} must be one word of printable ASCII (it is sent in an HTTP header)`);
  else if (token.length < MIN_TOKEN_LENGTH)
    problem(`${what} is shorter than ${MIN_TOKEN_LENGTH} characters; make one with: openssl rand -hex 32`);
  else return { token: new ControlToken(token), issues };
  return { issues };
}
