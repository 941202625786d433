import { compileLinear } from '@wds/regex';

/**
 * `includePaths` / `excludePaths` are regular expressions from the request, run against every
 * discovered link. A JavaScript RegExp backtracks: `(a+)+$` against a 30-character path takes
 * seconds, and doubles with each character. They run on RE2 instead (re2js, a pure-JS port of
 * RE2: no native build, no WebAssembly), whose matching is linear in the subject, at about
 * 1 µs for a path of 30 to 200 characters.
 *
 * The syntax is JavaScript's where RE2 has it (`^/blog/.*`, `\d+`, classes, groups,
 * alternation, `\/`, `(?<name>…)`, `\uXXXX`); backreferences and lookaround have no linear-time
 * implementation and are refused, as are patterns over the caps below (`@wds/regex`). The same compiler checks
 * requests at the API edge (`checkPathPatterns`) and matches in the workers (`compilePathPattern`),
 * so a pattern the API accepts always compiles.
 */
export const PATH_PATTERN_LIMITS = {
  /** Characters of one pattern. */
  maxLength: 1_000,
  /** Patterns in one list (includePaths or excludePaths). */
  maxCount: 100,
  /**
   * Instructions of one compiled pattern. Matching stays linear beyond it, but the constant
   * grows: measured on an 8,000-character path, patterns up to ~1,000 instructions matched in
   * under 0.5 ms, `(a?){500}a{500}` (2,502) in 60–110 ms.
   */
  maxProgramSize: 1_000,
  /** Characters of all patterns of a request: bounds the API's compile work (~65 ms at worst). */
  maxTotalLength: 10_000,
} as const;

export interface PathPattern {
  source: string;
  test(subject: string): boolean;
}

export type CompiledPattern = { ok: true; pattern: PathPattern } | { ok: false; reason: string };

export function compilePathPattern(source: string): CompiledPattern {
  const c = compileLinear(source, PATH_PATTERN_LIMITS);
  return c.ok ? { ok: true, pattern: c.regex } : c;
}

/** Compiles a list the API has accepted; a pattern that does not compile (an old job's) matches nothing. */
export function compilePathPatterns(sources: readonly string[] | null | undefined): PathPattern[] {
  return (sources ?? []).map((source) => {
    const c = compilePathPattern(source);
    return c.ok ? c.pattern : { source, test: () => false };
  });
}

export interface PathPatternIssue {
  path: ['includePaths' | 'excludePaths', number] | ['includePaths' | 'excludePaths'];
  message: string;
}

/** What is wrong with a request's patterns (empty when nothing), one issue per bad pattern. */
export function checkPathPatterns(o: { includePaths?: readonly string[] | null; excludePaths?: readonly string[] | null }): PathPatternIssue[] {
  const issues: PathPatternIssue[] = [];
  let total = 0;
  for (const field of ['includePaths', 'excludePaths'] as const) {
    const list = o[field] ?? [];
    if (list.length > PATH_PATTERN_LIMITS.maxCount) {
      issues.push({ path: [field], message: `${field} may hold at most ${PATH_PATTERN_LIMITS.maxCount} patterns` });
      continue;
    }
    for (const [i, source] of list.entries()) {
      total += source.length;
      if (total > PATH_PATTERN_LIMITS.maxTotalLength) {
        issues.push({ path: [field, i], message: `includePaths and excludePaths may hold at most ${PATH_PATTERN_LIMITS.maxTotalLength} characters of patterns together` });
        return issues; // nothing past the budget is compiled
      }
      const c = compilePathPattern(source);
      if (!c.ok) issues.push({ path: [field, i], message: `${field}[${i}] '${source}' ${c.reason}` });
    }
  }
  return issues;
}
