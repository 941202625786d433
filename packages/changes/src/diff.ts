import { structuredPatch } from 'diff';
import type { ChangeDiff } from '@wds/contracts';
import { normalizeMarkdown } from './normalize';

/** Lines of context around each change, as `git diff` shows by default. */
const CONTEXT_LINES = 3;
/**
 * Bounds of the line diff (Myers, O(N·D)): two large, wholly different pages would otherwise
 * cost seconds of CPU. Past them the diff is one hunk replacing every line, which is what such
 * a change is.
 */
const MAX_EDIT_LENGTH = 20_000;
const DIFF_TIMEOUT_MS = 2_000;

type Chunk = ChangeDiff['json']['files'][number]['chunks'][number];
type Change = Chunk['changes'][number];

/**
 * The `git-diff` mode's diff of two markdowns, both normalized first (normalizeMarkdown): the
 * unified text (hunks only, as Firecrawl's docs show it) and the same hunks in parse-diff's
 * structure. Null when the normalized texts are equal: an empty diff is never a change.
 */
export function gitDiff(previous: string, current: string): ChangeDiff | null {
  const a = normalizeMarkdown(previous);
  const b = normalizeMarkdown(current);
  if (a === b) return null;
  // A trailing newline on both sides keeps "\ No newline at end of file" out of the hunks.
  const oldText = a ? `${a}\n` : '';
  const newText = b ? `${b}\n` : '';
  const patch = structuredPatch('previous', 'current', oldText, newText, undefined, undefined, { context: CONTEXT_LINES, maxEditLength: MAX_EDIT_LENGTH, timeout: DIFF_TIMEOUT_MS });
  const hunks = patch?.hunks ?? [wholeReplacement(oldText, newText)];
  const chunks = hunks.map(toChunk);
  const count = (t: Change['type']) => chunks.reduce((n, c) => n + c.changes.filter((x) => x.type === t).length, 0);
  return {
    text: chunks.map((c) => [c.content, ...c.changes.map((x) => `${MARK[x.type]}${x.content}`)].join('\n')).join('\n'),
    json: { files: [{ from: null, to: null, additions: count('add'), deletions: count('del'), chunks }] },
  };
}

const MARK: Record<Change['type'], string> = { add: '+', del: '-', normal: ' ' };

interface Hunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: string[];
}

/** Every old line removed, every new line added: the diff past the edit bounds. */
function wholeReplacement(oldText: string, newText: string): Hunk {
  const lines = (t: string) => (t ? t.slice(0, -1).split('\n') : []);
  const o = lines(oldText);
  const n = lines(newText);
  return { oldStart: o.length ? 1 : 0, oldLines: o.length, newStart: n.length ? 1 : 0, newLines: n.length, lines: [...o.map((l) => `-${l}`), ...n.map((l) => `+${l}`)] };
}

/** A hunk in parse-diff's form: line numbers per side, the marker turned into `type`. */
function toChunk(h: Hunk): Chunk {
  let oldLn = h.oldStart;
  let newLn = h.newStart;
  const changes: Change[] = [];
  for (const line of h.lines) {
    const content = line.slice(1);
    if (line.startsWith('+')) changes.push({ type: 'add', add: true, ln: newLn++, content });
    else if (line.startsWith('-')) changes.push({ type: 'del', del: true, ln: oldLn++, content });
    else if (line.startsWith(' ')) changes.push({ type: 'normal', normal: true, ln1: oldLn++, ln2: newLn++, content });
    // "\ No newline at end of file" cannot occur: both texts end with a newline.
  }
  // Unified diff's convention: a side with no lines names the line before the hunk (`-0,0`).
  const oldStart = h.oldLines === 0 ? Math.max(0, h.oldStart - 1) : h.oldStart;
  const newStart = h.newLines === 0 ? Math.max(0, h.newStart - 1) : h.newStart;
  return {
    content: `@@ -${oldStart},${h.oldLines} +${newStart},${h.newLines} @@`,
    oldStart,
    oldLines: h.oldLines,
    newStart,
    newLines: h.newLines,
    changes,
  };
}
