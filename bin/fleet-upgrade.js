#!/usr/bin/env node
// Entry of the `fleet-upgrade` command: runs the compiled CLI from dist/ (built by `npm run build`,
// which `npm ci` runs through the `prepare` script).
import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const main = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist', 'cli', 'main.js');
if (!existsSync(main)) {
  process.stderr.write(
    `fleet-upgrade: ${main} is missing; run "npm run build" in the project folder first.\n`,
  );
  process.exit(70);
}
const { main: run } = await import(pathToFileURL(main).href);
await run(process.argv);
