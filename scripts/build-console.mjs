// Part of `npm run build`: bundles the web console (src/console/main.tsx, Preact) with esbuild
// into dist/console/app.js, and copies its page and stylesheet beside it. The daemon serves them
// (src/http/serve-console.ts); nothing is fetched from elsewhere at run time.
import { copyFileSync, mkdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src', 'console');
const out = join(root, 'dist', 'console');
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [join(src, 'main.tsx')],
  outfile: join(out, 'app.js'),
  bundle: true,
  format: 'esm',
  minify: true,
  target: ['es2022'],
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'none',
  logLevel: 'warning',
});
for (const file of ['index.html', 'console.css']) copyFileSync(join(src, file), join(out, file));
