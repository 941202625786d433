import { RE2JS } from 're2js';

/**
 * A regular expression from a request, compiled for a linear-time engine (see README.md). Its
 * `toString` is its source, so code that keys compiled patterns by their text (ajv) tells them apart.
 */
export interface LinearRegex {
  readonly source: string;
  test(subject: string): boolean;
  toString(): string;
}

export interface LinearLimits {
  /** Characters of the pattern. */
  maxLength: number;
  /** Instructions of the compiled program. */
  maxProgramSize: number;
}

export type LinearCompiled = { ok: true; regex: LinearRegex } | { ok: false; reason: string };

/** `source` compiled for RE2, or the reason it cannot be (a phrase that follows the pattern: "… is not a supported …"). */
export function compileLinear(source: string, limits: LinearLimits): LinearCompiled {
  if (source.length > limits.maxLength) return { ok: false, reason: `is longer than ${limits.maxLength} characters` };
  let re: RE2JS;
  try {
    re = RE2JS.compile(RE2JS.translateRegExp(source));
  } catch (e) {
    const why = e instanceof Error ? e.message.replace(/^error parsing regexp: /, '') : String(e);
    return { ok: false, reason: `is not a supported regular expression (${why}); patterns run on a linear-time engine (RE2 syntax): backreferences and lookaround are not available` };
  }
  const size = re.programSize();
  if (size > limits.maxProgramSize) {
    return { ok: false, reason: `is too complex for the linear-time engine (${size} instructions, at most ${limits.maxProgramSize}); use smaller repetition counts` };
  }
  return { ok: true, regex: { source, test: (s) => re.test(s), toString: () => `/${source}/` } };
}
