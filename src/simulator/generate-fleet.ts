/**
 * Synthetic Collectors with realistic names, hosts, operating systems and time zones, the same
 * for the same seed. Ids ascend with small gaps, as real Collector ids do.
 */
import { createRandom, type Random } from '../lib/random.js';
import type { FleetCollector } from './schema.js';

export interface GenerateOptions {
  count: number;
  seed: number;
  hostedRatio: number;
  offlineRatio: number;
  upToDateRatio: number;
  idStart: number;
  /** Builds oldest to newest; generated Collectors run one of them. */
  builds: readonly string[];
  /** Ids already taken by explicit Collectors. */
  takenIds?: ReadonlySet<number>;
}

const ROLES = [
  'web',
  'api',
  'db',
  'cache',
  'queue',
  'worker',
  'edge',
  'batch',
  'auth',
  'search',
  'log',
  'mon',
];
const ENVS = ['prod', 'prod', 'prod', 'stage', 'dev', 'qa'];
const REGIONS = ['us-east-1', 'us-west-2', 'eu-west-1', 'eu-central-1', 'ap-southeast-2', 'ap-northeast-1'];
const TIME_ZONES = [
  ['Etc/UTC', 30],
  ['America/New_York', 12],
  ['America/Chicago', 6],
  ['America/Los_Angeles', 10],
  ['Europe/London', 6],
  ['Europe/Berlin', 10],
  ['Europe/Paris', 4],
  ['Asia/Tokyo', 6],
  ['Asia/Kolkata', 4],
  ['Asia/Singapore', 4],
  ['Australia/Sydney', 5],
  ['America/Sao_Paulo', 3],
] as const;

interface OsProfile {
  osName: string;
  osVersions: readonly string[];
  osArch: readonly (readonly [string, number])[];
}

const OSES: readonly (readonly [OsProfile, number])[] = [
  [
    {
      osName: 'Linux',
      osVersions: ['5.15.0-105-generic', '6.8.0-45-generic', '5.4.0-186-generic'],
      osArch: [
        ['amd64', 8],
        ['aarch64', 2],
      ],
    },
    55,
  ],
  [
    {
      osName: 'Linux',
      osVersions: ['5.10.216-204.855.amzn2.x86_64', '6.1.94-99.176.amzn2023.x86_64'],
      osArch: [['amd64', 1]],
    },
    15,
  ],
  [
    {
      osName: 'Linux',
      osVersions: ['4.18.0-513.5.1.el8_9.x86_64', '5.14.0-427.13.1.el9_4.x86_64'],
      osArch: [['amd64', 1]],
    },
    10,
  ],
  [{ osName: 'Windows Server 2019', osVersions: ['10.0'], osArch: [['amd64', 1]] }, 8],
  [{ osName: 'Windows Server 2022', osVersions: ['10.0'], osArch: [['amd64', 1]] }, 7],
  [
    {
      osName: 'Mac OS X',
      osVersions: ['13.6.7', '14.5'],
      osArch: [
        ['x86_64', 1],
        ['aarch64', 2],
      ],
    },
    5,
  ],
];

/** A host name unique to the `n`th generated Collector (real Collector names are unique). */
function hostFor(rng: Random, os: OsProfile, n: number): string {
  const tag = n.toString(36).padStart(3, '0');
  if (os.osName.startsWith('Windows')) return `WIN-${rng.pick(ROLES).toUpperCase()}-${tag.toUpperCase()}`;
  if (os.osName === 'Mac OS X') return `mbp-${rng.pick(['build', 'ci', 'dev', 'design'])}-${tag}`;
  if (rng.chance(0.3)) {
    const a = 16 + ((n >> 16) & 15);
    return `ip-10-${a}-${(n >> 8) & 255}-${n & 255}.${rng.pick(REGIONS)}.compute.internal`;
  }
  return `${rng.pick(ROLES)}-${rng.pick(ENVS)}-${tag}.${rng.pick(REGIONS)}.internal`;
}

/** Generates `count` Collectors; deterministic for the same options. */
export function generateFleet(options: GenerateOptions): FleetCollector[] {
  const rng = createRandom(options.seed);
  const builds = options.builds;
  const latest = builds.length - 1;
  // Older builds are rarer the older they are: weights 1, 2, 3, ... towards the newest old build.
  const olderWeights = builds.slice(0, latest).map((b, i) => [b, i + 1] as const);
  const out: FleetCollector[] = [];
  let id = options.idStart;
  for (let n = 0; n < options.count; n++) {
    while (options.takenIds?.has(id)) id++;
    const os = rng.weighted(OSES);
    const hostName = hostFor(rng, os, n);
    const hosted = rng.chance(options.hostedRatio);
    const upToDate = olderWeights.length === 0 || rng.chance(options.upToDateRatio);
    const version = upToDate ? (builds[latest] as string) : rng.weighted(olderWeights);
    const short = hostName.split('.')[0] as string;
    out.push({
      id,
      name: hosted
        ? `hosted-${rng.pick(['http', 's3', 'cloudwatch', 'azure'])}-${n}`
        : rng.chance(0.3)
          ? `SumoCollector_${short}`
          : short,
      hostName: hosted ? '' : hostName,
      version,
      type: hosted ? 'Hosted' : 'Installable',
      alive: hosted ? true : !rng.chance(options.offlineRatio),
      timeZone: rng.weighted(TIME_ZONES),
      osName: hosted ? '' : os.osName,
      osVersion: hosted ? '' : rng.pick(os.osVersions),
      osArch: hosted ? '' : rng.weighted(os.osArch),
      ephemeral: !hosted && rng.chance(0.05),
      sourceSyncMode: rng.chance(0.8) ? 'UI' : 'Json',
      flap: false,
    });
    id += 1 + rng.int(0, 20);
  }
  return out;
}
