// Production functions longer than the design's bound (issue 30: none over 80 lines), and
// signatures of more than three positional parameters. `node --import tsx scripts/long-functions.ts`
// lists them; scripts/lint.test.ts fails on any.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;
const ROOTS = ['apps', 'packages', 'workflows', 'activities'];
const SKIP_DIR = new Set(['node_modules', 'e2e', 'histories']);
/** Longest body a function may have, counted from its first line to its last. */
export const MAX_FUNCTION_LINES = 80;
export const MAX_POSITIONAL_PARAMS = 3;
const isProduction = (f: string) => f.endsWith('.ts') && !f.endsWith('.d.ts') && !/\.test\.ts$|(^|\/)fixtures?\.ts$|(^|\/)fixture-[^/]*\.ts$|\.bench\.ts$/.test(f);

function listFiles(dir: string, out: string[] = []): string[] {
  for (const name of readdirSync(dir)) {
    if (SKIP_DIR.has(name)) continue;
    const p = join(dir, name);
    if (statSync(p).isDirectory()) listFiles(p, out);
    else if (isProduction(p)) out.push(p);
  }
  return out;
}

export interface Finding {
  file: string;
  line: number;
  name: string;
  lines?: number;
  params?: number;
}

function nameOf(node: ts.Node): string {
  if ((ts.isFunctionDeclaration(node) || ts.isMethodDeclaration(node)) && node.name) return node.name.getText();
  const p = node.parent;
  if (p && ts.isVariableDeclaration(p)) return p.name.getText();
  if (p && ts.isPropertyAssignment(p)) return p.name.getText();
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  return '(anonymous)';
}

/** The functions of one file that are too long or take too many positional parameters. */
export function findingsOf(file: string, text = readFileSync(file, 'utf8')): Finding[] {
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.ES2022, true);
  const out: Finding[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = sf.getLineAndCharacterOfPosition(node.getStart(sf)).line;
      const end = sf.getLineAndCharacterOfPosition(node.getEnd()).line;
      const lines = end - start + 1;
      const line = start + 1;
      const params = node.parameters.filter((p) => !p.dotDotDotToken).length;
      if (lines > MAX_FUNCTION_LINES) out.push({ file, line, name: nameOf(node), lines });
      // Callbacks given to a library keep its signature; this counts what our own code declares.
      if (params > MAX_POSITIONAL_PARAMS && !ts.isArrowFunction(node) && !ts.isFunctionExpression(node)) out.push({ file, line, name: nameOf(node), params });
    }
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out;
}

export function projectFindings(): Finding[] {
  return ROOTS.flatMap((d) => listFiles(join(root, d))).flatMap((f) => findingsOf(f)).map((x) => ({ ...x, file: relative(root, x.file) }));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const all = projectFindings();
  for (const f of all.sort((a, b) => (b.lines ?? 0) - (a.lines ?? 0))) console.log(`${f.file}:${f.line} ${f.name} ${f.lines ? `${f.lines} lines` : `${f.params} positional parameters`}`);
  console.log(`${all.length} findings`);
  process.exit(all.length ? 1 : 0);
}
