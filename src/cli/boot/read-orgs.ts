/**
 * The organizations a deployment drives, from the settings file's `orgs` (each its own base URL,
 * access ID and key, the key only from a file or an environment variable), or, without `orgs`,
 * the one organization `default` that the `SUMOLOGIC_*` variables define (daemon-config.ts reads
 * those as before). Every problem names the file, line and field; no key appears in a message.
 */
import {
  type ApiConfig,
  baseUrlForDeployment,
  DEPLOYMENTS,
  type Deployment,
  normaliseBaseUrl,
} from '../../api/index.js';
import type { SourceIssue } from '../../lib/errors.js';
import { formatFieldPath } from '../../lib/source/yaml-source.js';
import { DEFAULT_ORG } from '../../rollout/index.js';
import type { DaemonConfigFile } from './schema.js';

export { DEFAULT_ORG };

/** One organization: its name and the client settings of its service. */
export interface OrgSettings {
  name: string;
  api: ApiConfig;
}

export function readOrgs(input: {
  list: NonNullable<DaemonConfigFile['orgs']>;
  file: string;
  env: Readonly<Record<string, string | undefined>>;
  readFile: (path: string) => string;
  locate?: (path: readonly PropertyKey[]) => { line: number; column: number } | undefined;
}): { orgs: OrgSettings[]; issues: SourceIssue[] } {
  const issues: SourceIssue[] = [];
  const problem = (path: (string | number)[], reason: string) => {
    const full = ['orgs', ...path];
    const pos = input.locate?.(full);
    issues.push({
      file: input.file,
      line: pos?.line,
      column: pos?.column,
      field: formatFieldPath(full),
      reason,
    });
  };
  const orgs: OrgSettings[] = [];
  const seen = new Set<string>();
  const ids = new Map<string, string>();
  input.list.forEach((o, i) => {
    if (seen.has(o.name)) problem([i, 'name'], `'${o.name}' is the name of an earlier organization`);
    seen.add(o.name);
    const accessId = o.accessId.trim();
    if (/[:\s]/.test(accessId)) problem([i, 'accessId'], 'must not contain a colon or white space');
    const twin = ids.get(`${o.baseUrl ?? o.deployment}|${accessId}`);
    if (twin)
      problem([i, 'accessId'], `is already the access ID of organization '${twin}' on the same service`);
    ids.set(`${o.baseUrl ?? o.deployment}|${accessId}`, o.name);
    let baseUrl: string | undefined;
    if (o.baseUrl && o.deployment)
      problem([i, 'baseUrl'], 'and deployment are both set; set only one of them');
    else if (o.baseUrl) baseUrl = normaliseBaseUrl(o.baseUrl, (reason) => problem([i, 'baseUrl'], reason));
    else if (o.deployment) {
      const dep = o.deployment.toLowerCase();
      if ((DEPLOYMENTS as readonly string[]).includes(dep)) baseUrl = baseUrlForDeployment(dep as Deployment);
      else problem([i, 'deployment'], `'${o.deployment}' is not one of ${DEPLOYMENTS.join(', ')}`);
    } else problem([i, 'deployment'], `is not set (nor baseUrl): one of ${DEPLOYMENTS.join(', ')}`);
    const accessKey = readKey(o, input, (field, reason) => problem([i, field], reason));
    if (baseUrl && accessKey) orgs.push({ name: o.name, api: { baseUrl, accessId, accessKey } });
  });
  return { orgs, issues };
}

function readKey(
  o: NonNullable<DaemonConfigFile['orgs']>[number],
  input: { env: Readonly<Record<string, string | undefined>>; readFile: (path: string) => string },
  problem: (field: string, reason: string) => void,
): string | undefined {
  if (o.accessKeyFile && o.accessKeyEnv) {
    problem('accessKeyFile', 'and accessKeyEnv are both set; set only one of them');
    return undefined;
  }
  if (o.accessKeyEnv) {
    const key = input.env[o.accessKeyEnv]?.trim();
    if (!key) problem('accessKeyEnv', `the environment variable ${o.accessKeyEnv} is not set`);
    else if (/\s/.test(key)) problem('accessKeyEnv', `${o.accessKeyEnv} holds more than one word`);
    else return key;
    return undefined;
  }
  if (!o.accessKeyFile) {
    problem('accessKeyFile', 'is not set (nor accessKeyEnv): name a file or a variable that holds the key');
    return undefined;
  }
  let text: string;
  try {
    text = input.readFile(o.accessKeyFile);
  } catch (err) {
    problem(
      'accessKeyFile',
      `cannot read ${o.accessKeyFile} (${(err as NodeJS.ErrnoException).code ?? 'unreadable'})`,
    );
    return undefined;
  }
  const key = text.trim();
  if (!key) problem('accessKeyFile', `${o.accessKeyFile} is empty`);
  else if (/\s/.test(key)) problem('accessKeyFile', `${o.accessKeyFile} holds more than one line or word`);
  else return key;
  return undefined;
}
