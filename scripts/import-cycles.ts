// The import graph of the production code, type imports included, and its cycles: eslint's
// import-x/no-cycle skips type-only imports, and a type-only cycle still ties two modules into one
// (neither can be read, moved or tested without the other). `node --import tsx scripts/import-cycles.ts`
// prints the cycles; scripts/lint.test.ts fails on any.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

const root = new URL('..', import.meta.url).pathname;
/** Production code: tests, fixtures, benchmarks and scripts are leaves of the graph, never part of a cycle worth naming. */
const ROOTS = ['apps', 'packages', 'workflows', 'activities'];
const SKIP_DIR = new Set(['node_modules', 'e2e', 'histories', 'dist']);
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

const options: ts.CompilerOptions = { module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, resolveJsonModule: true };

/** Every module a file imports, exports from or loads with a literal import(), resolved to project files. */
export function importGraph(files: string[]): Map<string, string[]> {
  const known = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, true);
    const deps = new Set<string>();
    for (const ref of info.importedFiles) {
      const r = ts.resolveModuleName(ref.fileName, file, options, ts.sys).resolvedModule;
      const target = r && ts.sys.realpath ? ts.sys.realpath(r.resolvedFileName) : r?.resolvedFileName;
      if (target && known.has(target) && target !== file) deps.add(target);
    }
    graph.set(file, [...deps]);
  }
  return graph;
}

/** Strongly connected components of more than one file (Tarjan), each sorted, largest first. */
export function cyclesOf(graph: Map<string, string[]>): string[][] {
  let next = 0;
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const out: string[][] = [];
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) === index.get(v)) {
      const scc: string[] = [];
      for (let w = ''; w !== v; ) {
        w = stack.pop()!;
        onStack.delete(w);
        scc.push(w);
      }
      if (scc.length > 1) out.push(scc.sort());
    }
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return out.sort((a, b) => b.length - a.length);
}

/** The production code's cycles, as paths relative to the repository. */
export function projectCycles(): string[][] {
  const files = ROOTS.flatMap((d) => listFiles(join(root, d)));
  return cyclesOf(importGraph(files)).map((c) => c.map((f) => relative(root, f)));
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const cycles = projectCycles();
  for (const c of cycles) console.log(`cycle of ${c.length}: ${c.join(' ')}`);
  console.log(cycles.length ? `${cycles.length} cycles` : 'no cycles');
  process.exit(cycles.length ? 1 : 0);
}
