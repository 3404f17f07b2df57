/**
 * Checks data (parsed YAML or JSON) against TypeScript types published with a schema (Grafana's
 * `@grafana/schema`, `kubernetes-models`), with the TypeScript compiler: each value is written as
 * an object literal typed by its schema type in a virtual module and type-checked. An object
 * literal gets excess property checks, so a misspelt or unknown field is an error as much as a
 * wrong type or a value outside an enum; JSON has no enums, so the schema's TypeScript enums are
 * read as the union of their values (`Json<T>` below).
 */
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

export interface TypedValue {
  /** Named in each error, e.g. `Deployment fleet-upgrade-daemon`. */
  label: string;
  /** A type expression over the names `imports` brings in, e.g. `IDeployment`. */
  type: string;
  value: unknown;
  /**
   * Every field optional, at every depth: for values that the consumer completes with defaults
   * (Grafana's panel options). Unknown fields and wrong types are still errors.
   */
  partial?: boolean;
}

export interface LiteralCheck {
  /** Import declarations of the schema types, e.g. `import type { Dashboard } from '@grafana/schema';` */
  imports: string;
  values: readonly TypedValue[];
}

/**
 * A string enum as its values, a numeric enum as its numbers, recursively; `any` stays `any`.
 * JsonPartial: the same with every field optional.
 */
const JSON_TYPE = `
type Json<T> = 0 extends 1 & T
  ? T
  : T extends string
    ? \`\${T}\`
    : T extends number
      ? \`\${T}\` extends \`\${infer N extends number}\` ? N : number
      : T extends readonly (infer U)[]
        ? Json<U>[]
        : T extends object
          ? { [K in keyof T]: Json<T[K]> }
          : T;
type JsonPartial<T> = 0 extends 1 & T
  ? T
  : T extends string | number | boolean | null | undefined
    ? Json<T>
    : T extends readonly (infer U)[]
      ? JsonPartial<U>[]
      : T extends object
        ? { [K in keyof T]?: JsonPartial<T[K]> }
        : T;
`;

// Module resolution starts from here, so that the project's node_modules answers the imports.
const VIRTUAL_FILE = fileURLToPath(new URL('./__typecheck_literals__.ts', import.meta.url));

const OPTIONS: ts.CompilerOptions = {
  strict: true,
  noEmit: true,
  skipLibCheck: true,
  types: [],
  lib: ['lib.es2022.d.ts'],
  target: ts.ScriptTarget.ES2022,
  // Node10 resolution reads files past the packages' `exports` maps: Grafana exports its panel
  // types (dist/types/raw/composable/...) only as .d.ts files that no export condition names.
  module: ts.ModuleKind.ESNext,
  moduleResolution: ts.ModuleResolutionKind.Node10,
};

let previous: ts.Program | undefined;
/** Library and schema declaration files, parsed once per test process. */
const parsedFiles = new Map<string, ts.SourceFile>();

/** The compiler's message, an unknown field named as such, a long type cut short. */
function shorten(d: ts.Diagnostic): string {
  const message = ts.flattenDiagnosticMessageText(d.messageText, ' ');
  const unknown = /Object literal may only specify known properties, and '"?([^'"]+)"?' does not exist/.exec(
    message,
  );
  if (unknown) return `unknown field '${unknown[1]}'`;
  return message.length > 300 ? `${message.slice(0, 300)}…` : message;
}

/** One line per error: the value's label, its line in the literal, and the compiler's message. */
export function typecheckLiterals(check: LiteralCheck): string[] {
  const lines = [check.imports, JSON_TYPE];
  const starts: { label: string; line: number }[] = [];
  check.values.forEach((v, i) => {
    starts.push({ label: v.label, line: lines.join('\n').split('\n').length });
    const type = `${v.partial ? 'JsonPartial' : 'Json'}<${v.type}>`;
    lines.push(`export const value${i}: ${type} = ${JSON.stringify(v.value, null, 1)};`);
  });
  const text = `${lines.join('\n')}\n`;
  const sourceLines = text.split('\n');
  const host = ts.createCompilerHost(OPTIONS);
  const getSourceFile = host.getSourceFile.bind(host);
  const fileExists = host.fileExists.bind(host);
  host.getSourceFile = (file, language, ...rest) => {
    if (file === VIRTUAL_FILE) return ts.createSourceFile(file, text, language, true);
    let parsed = parsedFiles.get(file);
    if (!parsed) {
      parsed = getSourceFile(file, language, ...rest);
      if (parsed) parsedFiles.set(file, parsed);
    }
    return parsed;
  };
  host.fileExists = (file) => file === VIRTUAL_FILE || fileExists(file);
  // The previous program lends its parsed library and schema files: only the literals are new.
  const program = ts.createProgram([VIRTUAL_FILE], OPTIONS, host, previous);
  previous = program;
  return ts.getPreEmitDiagnostics(program).map((d) => {
    const message = shorten(d);
    if (d.file?.fileName !== VIRTUAL_FILE || d.start === undefined) return message;
    const line = d.file.getLineAndCharacterOfPosition(d.start).line;
    const owner = [...starts].reverse().find((s) => s.line <= line);
    const where = owner ? `${owner.label}, line ${line - owner.line + 1} of the literal` : `line ${line + 1}`;
    return `${where} (${sourceLines[line]?.trim()}): ${message}`;
  });
}
