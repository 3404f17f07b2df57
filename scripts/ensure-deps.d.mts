// Types of ensure-deps.mjs (plain ESM, so that node runs it without a build); see its header.

/** The project's folder. */
export const root: string;
/** `npm ci` when node_modules is missing or older than the lock (npm's warnings left out). */
export function ensureDeps(): void;
/** `npm run build` unless dist/ is newer than every source. */
export function build(): void;
/** Whether `dir`'s dist/cli/main.js is newer than every source (default: the project's). */
export function builtAfterSources(dir?: string): boolean;
export function run(cmd: string, args: string[], options?: object): void;
