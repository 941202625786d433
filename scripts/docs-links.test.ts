import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { test } from 'node:test';

// The README and docs/ point at each other, at files of the repository and at headings: a moved page
// or a renamed heading leaves a dead link, found here. Every app, package, workflows/ and activities/
// has a README that says what it must not import.
const root = new URL('..', import.meta.url).pathname;

function markdownFiles(dir: string): string[] {
  return readdirSync(join(root, dir)).flatMap((n) => {
    const p = join(dir, n);
    return statSync(join(root, p)).isDirectory() ? markdownFiles(p) : n.endsWith('.md') ? [p] : [];
  });
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to dashes. */
function anchors(markdown: string): Set<string> {
  const out = new Set<string>();
  for (const m of markdown.replace(/```[\s\S]*?```/g, '').matchAll(/^#{1,6}\s+(.+)$/gm)) {
    out.add(m[1]!.trim().toLowerCase().replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-'));
  }
  return out;
}

const pages = ['README.md', ...markdownFiles('docs'), 'apps/api/README.md', 'apps/worker/README.md', 'apps/server/README.md'];

test('every relative link of the README and docs/ reaches a file, and its #anchor a heading there', () => {
  const dead: string[] = [];
  for (const page of pages) {
    const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      if (/^[a-z]+:/i.test(target!)) continue;
      const [path, hash] = target!.split('#') as [string, string | undefined];
      const file = path ? relative(root, join(dirname(join(root, page)), path)) : page;
      if (!existsSync(join(root, file))) dead.push(`${page}: ${target} (no ${file})`);
      else if (hash && file.endsWith('.md') && !anchors(readFileSync(join(root, file), 'utf8')).has(hash)) dead.push(`${page}: ${target} (no heading #${hash} in ${file})`);
    }
  }
  assert.deepEqual(dead, []);
});

test('every app and package README says what it must not import', () => {
  const dirs = ['apps', 'packages'].flatMap((d) => readdirSync(join(root, d)).map((n) => `${d}/${n}`)).concat(['workflows', 'activities']);
  const missing = dirs.filter((d) => !existsSync(join(root, d, 'README.md')) || !/must not import|\*\*never\*\* temporal/i.test(readFileSync(join(root, d, 'README.md'), 'utf8')));
  assert.deepEqual(missing, []);
});

test('the README is a front door: under 10 KB, and the two commands CI runs are its first code block', () => {
  const readme = readFileSync(join(root, 'README.md'), 'utf8');
  assert.ok(Buffer.byteLength(readme) < 10 * 1024, `README.md is ${Buffer.byteLength(readme)} bytes`);
  const first = /```sh\n([\s\S]*?)```/.exec(readme)![1]!;
  assert.match(first, /^npm install && npm start\s/m);
  assert.match(first, /^npm test\s/m);
  assert.match(readFileSync(join(root, '.ci/run'), 'utf8'), /^npm test$/m, '.ci/run runs the README\'s test command');
});
