// `npm run bench -- NAME [args]`: runs bench/NAME.ts with tsx (after making sure dependencies are there).
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDeps, root, run } from './ensure-deps.mjs';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3));
if (!name || !existsSync(join(root, 'bench', `${name}.ts`))) {
  process.stderr.write(`usage: npm run bench -- NAME [args]\nbenchmarks: ${available.join(', ')}\n`);
  process.exit(64);
}
ensureDeps();
run('npx', ['tsx', join('bench', `${name}.ts`), ...args]);
