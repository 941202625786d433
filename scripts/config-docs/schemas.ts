import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import ts from 'typescript';

/**
 * What the env schemas declare, read two ways: the source (TypeScript's parser) gives each
 * variable's name, JSDoc comment, section and helper call; the imported shape itself gives what
 * the process really gets when the variable is unset. The two must list the same names, so a
 * parser that misses a declaration fails instead of leaving a variable out of the page.
 */

export const root = new URL('../..', import.meta.url).pathname;

/** The processes that parse an env shape, in the page's order. */
export const PROCESSES = [
  { id: 'api', label: 'API', file: 'apps/api/src/env.ts', shape: 'apiEnvShape' },
  { id: 'worker', label: 'worker', file: 'apps/worker/src/env.ts', shape: 'workerEnvShape' },
  { id: 'start', label: '`npm start`', file: 'apps/server/src/env.ts', shape: 'serverEnvShape' },
  { id: 'cli', label: 'CLIs', file: 'apps/server/src/env.ts', shape: 'keysEnvShape' },
] as const;
export type ProcessId = (typeof PROCESSES)[number]['id'];

/** Shapes other shapes take entries from (`...commonEnvShape`, `commonEnvShape.DATABASE_URL`). */
const SHARED = [{ file: 'packages/config/src/common.ts', shape: 'commonEnvShape' }];

/** One `NAME: schema` property as written in a shape. */
export interface Declaration {
  name: string;
  file: string;
  shape: string;
  /** The JSDoc comment's text, '' when there is none. */
  doc: string;
  /** The `// ---- Section ----` comment it stands under, if any. */
  section?: string;
  /** The schema expression's source, e.g. `envInt(50, 1, 1000)`. */
  schema: ts.Expression;
  sourceFile: ts.SourceFile;
}

type Shape = Map<string, Declaration>;

function jsDocOf(node: ts.Node): string {
  const docs = ts.getJSDocCommentsAndTags(node).filter(ts.isJSDoc);
  return docs.map((d) => ts.getTextOfJSDocComment(d.comment) ?? '').join('\n\n').trim();
}

function sectionOf(node: ts.Node, sf: ts.SourceFile): string | undefined {
  const ranges = ts.getLeadingCommentRanges(sf.text, node.getFullStart()) ?? [];
  for (const r of ranges) {
    const m = /^\/\/\s*-{2,}\s*(.+?)\s*-{2,}\s*$/.exec(sf.text.slice(r.pos, r.end));
    if (m) return m[1];
  }
  return undefined;
}

function shapeLiteral(sf: ts.SourceFile, name: string): ts.ObjectLiteralExpression {
  for (const st of sf.statements) {
    if (!ts.isVariableStatement(st)) continue;
    for (const d of st.declarationList.declarations) {
      if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer && ts.isObjectLiteralExpression(d.initializer)) return d.initializer;
    }
  }
  throw new Error(`${sf.fileName}: no \`const ${name} = { … }\` object literal`);
}

/** Reads every shape's declarations in source order, spreads and references resolved. */
export function readDeclarations(): Map<string, Shape> {
  const shapes = new Map<string, Shape>();
  const files = new Map<string, ts.SourceFile>();
  const source = (file: string) => {
    if (!files.has(file)) files.set(file, ts.createSourceFile(file, readFileSync(join(root, file), 'utf8'), ts.ScriptTarget.ES2022, true));
    return files.get(file)!;
  };
  const lookup = (name: string) => {
    const s = shapes.get(name);
    if (!s) throw new Error(`shape ${name} is used before it is read (list it in SHARED or earlier in PROCESSES)`);
    return s;
  };
  for (const { file, shape } of [...SHARED, ...PROCESSES]) {
    const sf = source(file);
    const out: Shape = new Map();
    let section: string | undefined;
    for (const el of shapeLiteral(sf, shape).properties) {
      if (ts.isSpreadAssignment(el) && ts.isIdentifier(el.expression)) {
        for (const [k, v] of lookup(el.expression.text)) out.set(k, v);
        continue;
      }
      if (!ts.isPropertyAssignment(el) || !ts.isIdentifier(el.name)) throw new Error(`${file}: ${shape} holds something other than NAME: schema (${el.getText(sf).slice(0, 60)})`);
      const name = el.name.text;
      const init = el.initializer;
      if (ts.isPropertyAccessExpression(init) && ts.isIdentifier(init.expression) && shapes.has(init.expression.text)) {
        const ref = lookup(init.expression.text).get(init.name.text);
        if (!ref) throw new Error(`${file}: ${init.getText(sf)} does not exist`);
        out.set(name, ref);
        continue;
      }
      section = sectionOf(el, sf) ?? section;
      out.set(name, { name, file, shape, doc: jsDocOf(el), section, schema: init, sourceFile: sf });
    }
    shapes.set(shape, out);
  }
  return shapes;
}

/** The shapes as the processes import them. */
export async function importShapes(): Promise<Record<string, Record<string, { safeParse(v: unknown): { success: boolean; data?: unknown } }>>> {
  const out: Record<string, never> = {};
  for (const { file, shape } of [...SHARED, ...PROCESSES]) {
    const mod = (await import(join(root, file))) as Record<string, never>;
    if (!mod[shape]) throw new Error(`${file} does not export ${shape}`);
    out[shape] = mod[shape];
  }
  return out;
}

/** A constant numeric expression of the source (`7 * 24 * 3_600_000`), or undefined. */
export function evalNumber(e: ts.Expression): number | undefined {
  if (ts.isNumericLiteral(e)) return Number(e.text.replace(/_/g, ''));
  if (ts.isParenthesizedExpression(e)) return evalNumber(e.expression);
  if (ts.isPrefixUnaryExpression(e) && e.operator === ts.SyntaxKind.MinusToken) {
    const v = evalNumber(e.operand);
    return v === undefined ? undefined : -v;
  }
  if (ts.isBinaryExpression(e)) {
    const [a, b] = [evalNumber(e.left), evalNumber(e.right)];
    if (a === undefined || b === undefined) return undefined;
    switch (e.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken: return a * b;
      case ts.SyntaxKind.PlusToken: return a + b;
      case ts.SyntaxKind.MinusToken: return a - b;
      case ts.SyntaxKind.SlashToken: return a / b;
    }
  }
  return undefined;
}
