/**
 * The fleet file as `simulate --fleet` reads it: either one organization (the fleet file as it
 * always was, named `default`) or `orgs:`, a list of organizations in one process. The
 * credentials decide which organization answers, so an accessId belongs to one organization
 * only; Collector ids and task ids may repeat across organizations, as in separate deployments.
 */
import { z } from 'zod';
import { FleetFile, type FleetFileInput, OrgFleet } from './schema.js';

export const MultiOrgFleetFile = z
  .object({ orgs: z.array(OrgFleet).min(1, 'at least one organization is needed') })
  .strict()
  .superRefine((file, ctx) => {
    const names = new Map<string, number>();
    const users = new Map<string, string>();
    file.orgs.forEach((org, i) => {
      const other = names.get(org.name);
      if (other !== undefined)
        ctx.addIssue({
          code: 'custom',
          path: ['orgs', i, 'name'],
          message: `duplicate organization name ${org.name} (also orgs[${other}])`,
        });
      else names.set(org.name, i);
      org.users.forEach((u, j) => {
        const owner = users.get(u.accessId);
        if (owner !== undefined && owner !== org.name)
          ctx.addIssue({
            code: 'custom',
            path: ['orgs', i, 'users', j, 'accessId'],
            message:
              `accessId ${u.accessId} is already a user of organization ${owner}: the credentials ` +
              'decide which organization answers, so an accessId belongs to one organization only',
          });
        else users.set(u.accessId, org.name);
      });
    });
  });
export type MultiOrgFleetFile = z.infer<typeof MultiOrgFleetFile>;
export type MultiOrgFleetFileInput = z.input<typeof MultiOrgFleetFile>;

/** Any fleet the simulator takes, as written or parsed. */
export type AnyFleetInput = FleetFileInput | FleetFile | MultiOrgFleetFileInput | MultiOrgFleetFile;

const hasOrgs = (value: unknown): boolean =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && 'orgs' in value;

/**
 * Either form, each validated by its own schema so that an error names the field as written
 * (`orgs[1].users[0].accessId`, or `collectors[3].version` in a one-organization file). The
 * union in front is only tried for a quick success and lets "did you mean" see both shapes.
 */
export const FleetSource = z
  .union([
    MultiOrgFleetFile.transform((parsed): { parsed: FleetFile | MultiOrgFleetFile } => ({ parsed })),
    FleetFile.transform((parsed): { parsed: FleetFile | MultiOrgFleetFile } => ({ parsed })),
    z.unknown().transform((raw) => ({ raw })),
  ])
  .transform((tried, ctx): FleetFile | MultiOrgFleetFile => {
    if ('parsed' in tried) return tried.parsed;
    const schema = hasOrgs(tried.raw) ? MultiOrgFleetFile : FleetFile;
    const result = schema.safeParse(tried.raw);
    if (result.success) return result.data;
    for (const issue of result.error.issues) ctx.addIssue(issue as Parameters<typeof ctx.addIssue>[0]);
    return z.NEVER;
  });

/** The organizations of a parsed fleet: a file without `orgs` is one organization named `default`. */
export function fleetOrgs(fleet: FleetFile | MultiOrgFleetFile): OrgFleet[] {
  return 'orgs' in fleet ? fleet.orgs : [{ name: 'default', ...fleet }];
}

/** Parses a fleet of either form into its organizations (throws a ZodError when it is not valid). */
export function parseFleet(input: AnyFleetInput): OrgFleet[] {
  return fleetOrgs(FleetSource.parse(input));
}
