/**
 * Failure messages → classes → actions (src/worker/classify-failure.ts) with causes parsed by the
 * policy's own schema (src/policy/failure-causes.ts, so the defaults are the real ones): realistic
 * messages of every built-in class, in the wordings of installers, operating systems and the
 * vendor; the order between classes when a message names two; the policy's patterns before the
 * built-ins; the 2,000-character cap; and the action of every class.
 */
import { describe, expect, it } from 'vitest';
import { FailureCauses } from '../../../src/policy/failure-causes.js';
import { checkSafePattern } from '../../../src/policy/select/check-safe-pattern.js';
import { FAILURE_MESSAGES } from '../../../src/simulator/failure-causes.js';
import {
  actionFor,
  BUILTIN_FAILURE_CLASSES,
  BUILTIN_PATTERNS,
  classifyFailure,
  isBuiltinFailureClass,
  MESSAGE_LIMIT,
} from '../../../src/worker/classify-failure.js';

const MESSAGES: Record<string, string[]> = {
  disk_space: [
    'not enough disk space',
    'Upgrade failed: Not enough disk space to extract the installer (needs 450 MB)',
    'write /opt/SumoCollector/tmp/upgrade.tar.gz: No space left on device',
    'ENOSPC: no space left on device, write',
    'Insufficient disk space on C:\\ to install the new version',
    'insufficient disk',
    'There is not enough space on the disk.',
    'Installer error 0x80070070',
    'ERROR_DISK_FULL while copying files',
    'The disk is full',
    'Disk quota exceeded',
    'Volume /var is full',
    'Low disk space: 12 MB free',
    'Collector reported: out of disk space',
    'Insufficient storage space to download the package',
    'filesystem full',
  ],
  upgrades_disabled: [
    'remote upgrades are disabled',
    'Remote upgrades are disabled on this Collector (disableUpgrade=true)',
    'disableUpgrade=true',
    'Collector has disableUpgrade = true in user.properties',
    'Upgrade is disabled for this collector',
    'upgrades disabled by local configuration',
    'The collector refuses remote upgrades',
    'Collector is configured not to allow upgrades',
    'Remote management is disabled',
    'Downgrade not allowed: remote downgrades are turned off',
    'Upgrade not permitted: disable_upgrade is set',
  ],
  permission: [
    'permission denied',
    'open /opt/SumoCollector/config/wrapper.conf: permission denied',
    'EACCES: permission denied, rename /opt/SumoCollector/lib',
    'Access is denied.',
    "Access to the path 'C:\\Program Files\\Sumo Logic Collector\\tanuki' is denied.",
    'Installer error 0x80070005',
    'Operation not permitted',
    'The service account lacks the required permissions to replace binaries',
    'Insufficient privileges to stop the service',
    'This installer must be run as root',
    'Upgrade requires administrator privileges',
    'cp: cannot create regular file: Read-only file system',
    'execution denied by SELinux policy',
    'EPERM: operation not permitted, unlink',
  ],
  network: [
    'could not download',
    'Could not download the upgrade package from https://collectors.sumologic.com/rest/download',
    'connection reset',
    'read tcp 10.0.0.5:51234->52.1.2.3:443: read: connection reset by peer',
    'timed out while downloading',
    'Timed out while downloading installer after 300 seconds',
    'DNS lookup failed for collectors.sumologic.com',
    'TLS handshake timeout',
    'SSL handshake failed',
    'x509: certificate signed by unknown authority',
    'Failed to connect to collectors.sumologic.com port 443: Connection refused',
    'connect ETIMEDOUT 52.1.2.3:443',
    'getaddrinfo ENOTFOUND collectors.sumologic.com',
    'Network is unreachable',
    'Download failed: HTTP 502 Bad Gateway',
    'Error while downloading: unexpected EOF',
    'Unable to reach the download server through the proxy',
    'socket hang up',
    'Temporary failure in name resolution',
    'Checksum mismatch in downloaded package',
    'Connection timed out',
  ],
  unknown: [
    'Upgrade failed',
    'Installer exited with code 1603',
    'Collector crashed during installation',
    'Upgrade timed out',
    'java.lang.NullPointerException at com.sumologic.Upgrade.run',
    '',
    'unexpected state',
  ],
};

describe('classifyFailure with the built-in patterns', () => {
  for (const [cls, messages] of Object.entries(MESSAGES)) {
    it(`classifies ${messages.length} realistic messages as ${cls}`, () => {
      const got = messages.map((m) => [m, classifyFailure(m)]);
      expect(got).toEqual(messages.map((m) => [m, cls]));
    });
  }

  it("classifies every message of the simulator's failure causes as its cause", () => {
    const got = Object.entries(FAILURE_MESSAGES).flatMap(([cause, messages]) =>
      messages.map((m) => [m, cause, classifyFailure(m)]),
    );
    expect(got).toEqual(got.map(([m, cause]) => [m, cause, cause]));
  });

  it('is case-insensitive', () => {
    expect(classifyFailure('NO SPACE LEFT ON DEVICE')).toBe('disk_space');
    expect(classifyFailure('PERMISSION DENIED')).toBe('permission');
    expect(classifyFailure('DISABLEUPGRADE=TRUE')).toBe('upgrades_disabled');
    expect(classifyFailure('Connection Reset')).toBe('network');
  });

  it('gives unknown to a missing message', () => {
    expect(classifyFailure(undefined)).toBe('unknown');
  });

  it('prefers the more specific cause when a message names two', () => {
    expect(classifyFailure('Upgrade not permitted: disableUpgrade=true')).toBe('upgrades_disabled');
    expect(classifyFailure('Could not download package: no space left on device')).toBe('disk_space');
    expect(classifyFailure('Permission denied while writing the downloaded file')).toBe('permission');
    expect(classifyFailure('Download failed: the disk is full')).toBe('disk_space');
    expect(classifyFailure('network drive: access is denied')).toBe('permission');
  });

  it('matches only the first 2,000 characters', () => {
    const padding = ' '.repeat(MESSAGE_LIMIT - 'disk is full'.length);
    expect(classifyFailure(`${padding}disk is full`)).toBe('disk_space');
    expect(classifyFailure(` ${padding}disk is full`)).toBe('unknown');
  });

  it('has built-in patterns that pass the check that policy patterns must pass', () => {
    for (const { regex } of BUILTIN_PATTERNS) expect(checkSafePattern(regex.source)).toBeUndefined();
    expect(new Set(BUILTIN_PATTERNS.map((p) => p.class))).toEqual(
      new Set(BUILTIN_FAILURE_CLASSES.filter((c) => c !== 'unknown')),
    );
  });

  it('answers quickly on a long adversarial message', () => {
    const started = performance.now();
    for (const filler of ['a', ' ', 'disk ', 'permission ', 'download ']) {
      expect(classifyFailure(filler.repeat(5000))).toBe('unknown');
    }
    expect(performance.now() - started).toBeLessThan(500);
  });
});

describe('classifyFailure with the policy patterns', () => {
  const causes = FailureCauses.parse({
    patterns: [
      { class: 'antivirus', match: 'blocked by .*(defender|crowdstrike)' },
      { class: 'network', match: 'proxy authentication required' },
      { class: 'disk_space', match: '\\bERR-17\\b' },
      { class: 'unknown', match: 'simulated failure' },
    ],
  });

  it('checks them before the built-ins, in the order written', () => {
    expect(classifyFailure('Installer blocked by Windows Defender: permission denied', causes.patterns)).toBe(
      'antivirus',
    );
    expect(classifyFailure('Installer BLOCKED BY CrowdStrike', causes.patterns)).toBe('antivirus');
    expect(classifyFailure('Upgrade failed with ERR-17', causes.patterns)).toBe('disk_space');
    expect(classifyFailure('simulated failure: no space left on device', causes.patterns)).toBe('unknown');
  });

  it('falls back to the built-ins when none matches', () => {
    expect(classifyFailure('Permission denied', causes.patterns)).toBe('permission');
    expect(classifyFailure('ERR-170', causes.patterns)).toBe('unknown');
  });

  it('never matches a pattern that the schema would refuse, when given one from code', () => {
    const unsafe = [
      { class: 'slow', match: '(a+)+$' },
      { class: 'broken', match: '(' },
    ];
    expect(classifyFailure('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa!', unsafe)).toBe('unknown');
    expect(classifyFailure('( permission denied', unsafe)).toBe('permission');
  });
});

describe('actionFor', () => {
  const defaults = FailureCauses.parse({});

  it('has defaults for every built-in class', () => {
    expect(Object.fromEntries(BUILTIN_FAILURE_CLASSES.map((c) => [c, actionFor(c, defaults)]))).toEqual({
      disk_space: { action: 'manual' },
      upgrades_disabled: { action: 'manual' },
      permission: { action: 'manual' },
      network: { action: 'retry', attempts: 3, backoff: 600_000 },
      unknown: { action: 'fail' },
    });
  });

  it("takes the policy's actions, and unknown's for a class without one", () => {
    const causes = FailureCauses.parse({
      patterns: [
        { class: 'antivirus', match: 'defender' },
        { class: 'flaky_mirror', match: 'mirror' },
      ],
      actions: {
        network: { action: 'retry', attempts: 5, backoff: '30m' },
        disk_space: 'fail',
        unknown: 'manual',
        flaky_mirror: { action: 'retry' },
      },
    });
    expect(actionFor('network', causes)).toEqual({ action: 'retry', attempts: 5, backoff: 1_800_000 });
    expect(actionFor('disk_space', causes)).toEqual({ action: 'fail' });
    expect(actionFor('permission', causes)).toEqual({ action: 'manual' });
    expect(actionFor('flaky_mirror', causes)).toEqual({ action: 'retry', attempts: 3, backoff: 600_000 });
    expect(actionFor('antivirus', causes)).toEqual({ action: 'manual' });
    expect(actionFor('never_named', causes)).toEqual({ action: 'manual' });
  });

  it('classifies and acts end to end', () => {
    const act = (message: string) => actionFor(classifyFailure(message), defaults).action;
    expect(act('No space left on device')).toBe('manual');
    expect(act('Remote upgrades are disabled (disableUpgrade=true)')).toBe('manual');
    expect(act('connection reset by peer')).toBe('retry');
    expect(act('Installer exited with code 1603')).toBe('fail');
  });

  it('knows which classes are built in', () => {
    expect(isBuiltinFailureClass('network')).toBe(true);
    expect(isBuiltinFailureClass('antivirus')).toBe(false);
  });
});
