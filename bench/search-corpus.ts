/**
 * Generated pages and queries for the search bench: a Zipf-distributed vocabulary of made-up words
 * (plus English function words, which the english configuration drops), pages of a few hundred
 * to ~1,200 words with titles and headings, in English, German, French or no declared language.
 * Deterministic for a seed, so runs compare.
 */

/** mulberry32: a small seeded PRNG. */
export function rng(seed: number) {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const SYLLABLES = ['ka', 'lo', 'mi', 'ren', 'ta', 'vo', 'shi', 'nar', 'el', 'qu', 'dan', 'po', 'zi', 'bra', 'tor', 'ix', 'mun', 'gal', 'fe', 'sor', 'ul', 'pra', 'ne', 'ost'];
const FUNCTION_WORDS = ['the', 'of', 'and', 'to', 'a', 'in', 'is', 'that', 'for', 'it', 'with', 'as', 'on', 'be', 'at', 'by', 'this', 'from', 'or', 'an'];

export interface Corpus {
  vocabulary: string[];
  /** A word drawn with Zipf frequencies (rank r has weight 1/r^1.07). */
  word(rand: () => number): string;
}

export function makeCorpus(size = 30_000, seed = 7): Corpus {
  const rand = rng(seed);
  const seen = new Set<string>(FUNCTION_WORDS);
  const vocabulary = [...FUNCTION_WORDS];
  while (vocabulary.length < size) {
    const n = 2 + Math.floor(rand() * 3);
    let w = '';
    for (let i = 0; i < n; i++) w += SYLLABLES[Math.floor(rand() * SYLLABLES.length)];
    if (!seen.has(w)) (seen.add(w), vocabulary.push(w));
  }
  // Cumulative Zipf weights, sampled by binary search.
  const cum: number[] = [];
  let total = 0;
  for (let r = 1; r <= vocabulary.length; r++) cum.push((total += 1 / r ** 1.07));
  return {
    vocabulary,
    word(r) {
      const x = r() * total;
      let lo = 0;
      let hi = cum.length - 1;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (cum[mid]! < x) lo = mid + 1;
        else hi = mid;
      }
      return vocabulary[lo]!;
    },
  };
}

const LANGS = [...Array(16).fill('en'), 'de', 'de', 'fr', null] as (string | null)[];

/** Page i of the corpus as a stored document (what a scrape or crawl stores), with its body words. */
export function makePage(c: Corpus, i: number, origin = 'https://docs.bench.test'): { document: unknown; words: string[] } {
  const r = rng(1_000_003 * (i + 1));
  const words = (n: number) => Array.from({ length: n }, () => c.word(r));
  // Titles and headings draw from the less common part of the vocabulary: they name a topic.
  const topical = (n: number) => Array.from({ length: n }, () => c.vocabulary[40 + Math.floor(r() ** 2 * (c.vocabulary.length - 40))]!);
  const title = topical(3 + Math.floor(r() * 5)).join(' ');
  const sections = 3 + Math.floor(r() * 4);
  const body: string[] = [];
  const parts = [`# ${title}`, ''];
  for (let s = 0; s < sections; s++) {
    parts.push(`## ${topical(2 + Math.floor(r() * 4)).join(' ')}`, '');
    const w = words(60 + Math.floor(r() * 240));
    body.push(...w);
    parts.push(w.join(' ') + '.', '');
  }
  const lang = LANGS[i % LANGS.length];
  const url = `${origin}/p/${i}`;
  return {
    document: { markdown: parts.join('\n'), metadata: { url, sourceURL: url, statusCode: 200, title, description: topical(8).join(' '), ...(lang ? { language: lang } : {}) } },
    words: body,
  };
}

/**
 * Queries as users write them, drawn from the pages (so they have answers): topic words from a
 * title, words or a quoted phrase from a body, and exclusions with `-word`.
 */
export function makeQueries(c: Corpus, pages: number, n: number, seed = 11): string[] {
  const r = rng(seed);
  const out: string[] = [];
  for (let q = 0; q < n; q++) {
    const page = makePage(c, Math.floor(r() * pages));
    const meta = (page.document as { metadata: { title: string } }).metadata;
    const titleWords = meta.title.split(' ');
    const pick = <T>(a: T[]) => a[Math.floor(r() * a.length)]!;
    const kind = r();
    if (kind < 0.35) out.push(Array.from({ length: 1 + Math.floor(r() * 2) }, () => pick(titleWords)).join(' '));
    else if (kind < 0.55) {
      const at = Math.floor(r() * (page.words.length - 2));
      out.push(`"${page.words[at]} ${page.words[at + 1]}"`);
    } else if (kind < 0.65) out.push(`${pick(titleWords)} -${c.word(r)}`);
    else out.push(Array.from({ length: 2 + Math.floor(r() * 2) }, () => pick(page.words)).join(' '));
  }
  return out;
}
