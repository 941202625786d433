import { labelled, type Labelled } from './dataset';
import { findPii } from './redact';
import { PII_KINDS, type PiiKind, type PiiMode, type PiiSpan } from './types';

/** Precision and recall of one kind over the labelled set. */
export interface KindScore {
  kind: PiiKind;
  gold: number;
  found: number;
  /** Gold spans some found span of the same kind overlaps. */
  recalled: number;
  /** Found spans overlapping a gold span of the same kind. */
  correct: number;
  /** Found spans with exactly the gold boundaries. */
  exact: number;
  precision: number;
  recall: number;
}

export interface Miss {
  group: string;
  text: string;
  kind: PiiKind;
  value: string;
  why: 'missed' | 'spurious';
}

const overlaps = (a: PiiSpan, b: PiiSpan) => a.kind === b.kind && a.start < b.end && b.start < a.end;

/** Scores the deterministic detectors on the labelled set (README: "Precision and recall"). */
export function evaluate(mode: PiiMode = 'fast', set: Labelled[] = labelled()): { scores: KindScore[]; misses: Miss[] } {
  const z = () => ({ gold: 0, found: 0, recalled: 0, correct: 0, exact: 0 });
  const acc = Object.fromEntries(PII_KINDS.map((k) => [k, z()])) as Record<PiiKind, ReturnType<typeof z>>;
  const misses: Miss[] = [];
  for (const sn of set) {
    const found = findPii(sn.text, { mode });
    for (const g of sn.gold) {
      acc[g.kind].gold++;
      if (found.some((f) => overlaps(f, g))) acc[g.kind].recalled++;
      else misses.push({ group: sn.group, text: sn.text, kind: g.kind, value: sn.text.slice(g.start, g.end), why: 'missed' });
    }
    for (const f of found) {
      acc[f.kind].found++;
      if (sn.gold.some((g) => overlaps(f, g))) acc[f.kind].correct++;
      else misses.push({ group: sn.group, text: sn.text, kind: f.kind, value: sn.text.slice(f.start, f.end), why: 'spurious' });
      if (sn.gold.some((g) => g.kind === f.kind && g.start === f.start && g.end === f.end)) acc[f.kind].exact++;
    }
  }
  const scores = PII_KINDS.map((kind) => {
    const a = acc[kind];
    return { kind, ...a, precision: a.found ? a.correct / a.found : 1, recall: a.gold ? a.recalled / a.gold : 1 };
  });
  return { scores, misses };
}
