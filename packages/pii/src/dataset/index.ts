import { PII_KINDS, type PiiKind, type PiiSpan } from '../types';
import { CONTACT } from './contact';
import { FINANCIAL } from './financial';
import { HOLDOUT } from './holdout';
import { IDS } from './ids';
import { NEGATIVES } from './negatives';
import { NETWORK } from './network';
import { PEOPLE } from './people';
import type { Snippet } from './types';

export type { Snippet } from './types';

/** Every labelled snippet, by group (README: "Labelled set"). */
export const DATASET: Record<string, Snippet[]> = { contact: CONTACT, financial: FINANCIAL, ids: IDS, network: NETWORK, people: PEOPLE, negatives: NEGATIVES, holdout: HOLDOUT };

export interface Labelled {
  group: string;
  lang: string;
  /** The snippet with its markers removed. */
  text: string;
  /** The marked spans in `text`. */
  gold: PiiSpan[];
}

const MARK = '[[';
const KINDS = new Set<string>(PII_KINDS);

/** Strips the `[[KIND:value]]` markers, keeping where each value ends up in the plain text. */
export function unmark(marked: string): { text: string; gold: PiiSpan[] } {
  const gold: PiiSpan[] = [];
  let text = '';
  let i = 0;
  for (;;) {
    const a = marked.indexOf(MARK, i);
    if (a < 0) break;
    const colon = marked.indexOf(':', a);
    const b = marked.indexOf(']]', colon);
    const kind = marked.slice(a + 2, colon);
    if (colon < 0 || b < 0 || !KINDS.has(kind)) throw new Error(`bad marker at ${a} in ${JSON.stringify(marked)}`);
    text += marked.slice(i, a);
    const value = marked.slice(colon + 1, b);
    gold.push({ kind: kind as PiiKind, start: text.length, end: text.length + value.length });
    text += value;
    i = b + 2;
  }
  return { text: text + marked.slice(i), gold };
}

/** The labelled set, without the held-out group unless asked (`only`: the groups to include). */
export function labelled(only?: readonly string[]): Labelled[] {
  return Object.entries(DATASET)
    .filter(([g]) => (only ? only.includes(g) : g !== 'holdout'))
    .flatMap(([group, snippets]) => snippets.map((sn) => ({ group, lang: sn.lang, ...unmark(sn.text) })));
}
