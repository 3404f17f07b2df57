// Part of `npm run build`: copies what tsc does not emit (the Lua scripts, src/**/lua/*.lua) from
// src/ to dist/, keeping their paths: src/lib/redis/redis-scripts.ts reads them beside the code.
import { cpSync, readdirSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

const src = join(root, 'src');
const dist = join(root, 'dist');
let copied = 0;
for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isFile() || !entry.name.endsWith('.lua')) continue;
  const from = join(entry.parentPath, entry.name);
  cpSync(from, join(dist, relative(src, from)));
  copied++;
}
if (copied === 0) {
  process.stderr.write('copy-assets: no Lua scripts found under src/\n');
  process.exit(1);
}
