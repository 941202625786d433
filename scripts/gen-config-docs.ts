// `npm run docs:config`: writes docs/configuration.md from the env schemas (scripts/config-docs/).
// `--check`: writes nothing, exits 1 when the page differs from what the schemas say.
// `--page FILE`: the page to write or check (default docs/configuration.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { renderConfigDocs } from './config-docs/render';
import { root } from './config-docs/schemas';

const args = process.argv.slice(2);
const check = args.includes('--check');
const pageArg = args.indexOf('--page');
const page = pageArg >= 0 ? args[pageArg + 1]! : join(root, 'docs/configuration.md');

const want = await renderConfigDocs();
if (!check) {
  writeFileSync(page, want);
  console.log(`wrote ${page}`);
} else {
  let have = '';
  try {
    have = readFileSync(page, 'utf8');
  } catch {
    // a missing page is stale like any other
  }
  if (have !== want) {
    const a = have.split('\n');
    const b = want.split('\n');
    const line = b.findIndex((l, i) => l !== a[i]);
    console.error(`${page} is out of step with the env schemas (first difference at line ${line + 1}: expected ${JSON.stringify(b[line] ?? '')}). Run \`npm run docs:config\`.`);
    process.exit(1);
  }
  console.log(`${page} matches the env schemas`);
}
