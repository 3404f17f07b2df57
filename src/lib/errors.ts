/**
 * Errors with a stable code that scripts and callers can switch on. Codes are
 * `FLEET_ERR_*` for our own failures; vendor codes (e.g. `collector.not.alive`) are kept
 * verbatim where they occur.
 */
export class FleetError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'FleetError';
    this.code = code;
  }
}

/** A configuration or input file that cannot be used; the message names file, line and field. */
export class ConfigError extends FleetError {
  readonly issues: readonly SourceIssue[];
  constructor(message: string, issues: readonly SourceIssue[] = []) {
    super('FLEET_ERR_CONFIG', message);
    this.name = 'ConfigError';
    this.issues = issues;
  }
}

export interface SourceIssue {
  file: string;
  line?: number;
  column?: number;
  /** Dotted path of the field, e.g. `collectors[3].version`; empty for the whole document. */
  field: string;
  reason: string;
}

export function formatIssue(issue: SourceIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}:${issue.column ?? 1}`;
  return issue.field ? `${where}: ${issue.field}: ${issue.reason}` : `${where}: ${issue.reason}`;
}
