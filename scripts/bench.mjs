// `npm run bench -- NAME [args]`: runs bench/NAME.ts with tsx (after making sure dependencies are there).
// `npm run bench -- NAME --help` prints what the benchmark measures and its options (the opening
// comment of bench/NAME.ts) and starts nothing; `npm run bench -- --help` lists the benchmarks.
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureDeps, root, run } from './ensure-deps.mjs';

const [name, ...args] = process.argv.slice(2);
const available = readdirSync(join(root, 'bench'))
  .filter((f) => f.endsWith('.ts'))
  .map((f) => f.slice(0, -3))
  .sort();
const asksHelp = (a) => a === '--help' || a === '-h';
/** The opening comment of bench/NAME.ts, without its comment marks. */
const header = (bench) => {
  const text = readFileSync(join(root, 'bench', `${bench}.ts`), 'utf8');
  const block = /^\/\*\*([\s\S]*?)\*\//.exec(text)?.[1] ?? '';
  return block
    .split('\n')
    .map((line) => line.replace(/^\s*\* ?/, ''))
    .join('\n')
    .trim();
};
const usage = 'usage: npm run bench -- NAME [args]   (NAME --help: what it measures, and its options)';
if (name !== undefined && asksHelp(name)) {
  const lines = available.map((b) => `  ${b.padEnd(18)} ${header(b).split('\n')[0]}`);
  process.stdout.write(`${usage}\nbenchmarks:\n${lines.join('\n')}\n`);
  process.exit(0);
}
if (!name || !existsSync(join(root, 'bench', `${name}.ts`))) {
  process.stderr.write(`${usage}\nbenchmarks: ${available.join(', ')}\n`);
  process.exit(64);
}
if (args.some(asksHelp)) {
  process.stdout.write(`npm run bench -- ${name}\n\n${header(name)}\n`);
  process.exit(0);
}
ensureDeps();
run('npx', ['tsx', join('bench', `${name}.ts`), ...args]);
