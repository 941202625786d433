import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AgentMessageRow } from '@wds/db';
import { countMessageTokens } from '@wds/llm';
import { fitTranscript } from './transcript';

let seq = 0;
const row = (step: number, role: AgentMessageRow['role'], content: string, extra: Partial<AgentMessageRow> = {}): AgentMessageRow =>
  ({ runId: 'r', seq: ++seq, step, role, content, toolCalls: null, toolCallId: null, result: null, key: `k${seq}`, credits: 0, reservationKey: null, createdAt: new Date(), ...extra }) as AgentMessageRow;

function transcript(steps: number, pageWords: number): AgentMessageRow[] {
  const rows = [row(0, 'system', 'You are an agent.'), row(0, 'user', 'Find things.')];
  for (let s = 1; s <= steps; s++) {
    rows.push(row(s, 'assistant', null as unknown as string, { toolCalls: [{ id: `c${s}`, name: 'scrape', arguments: '{}' }] }));
    rows.push(row(s, 'tool', `page ${s} `.repeat(pageWords), { toolCallId: `c${s}` }));
  }
  return rows;
}

test('everything fits: all of it, in order, with its token count', () => {
  const rows = transcript(3, 10);
  const r = fitTranscript(rows, { contextWindow: 100_000, maxOutput: 4_096 }, 0);
  assert.equal(r.messages.length, rows.length);
  assert.equal(r.messages[0]!.role, 'system');
  assert.equal(r.messages.at(-1)!.role, 'tool');
  // Counted per step (each count adds the reply primer, 3 tokens): never below the exact count.
  const exact = countMessageTokens(r.messages.map((m) => ({ content: m.content ?? JSON.stringify(m.toolCalls ?? []) })));
  assert.ok(r.tokens >= exact && r.tokens <= exact + 3 * 4, `${r.tokens} vs ${exact}`);
});

test('too long: whole steps drop oldest first, the opening turns stay, a call never loses its result', () => {
  const rows = transcript(10, 200);
  const r = fitTranscript(rows, { contextWindow: 3_000, maxOutput: 1_000 }, 500);
  assert.ok(r.tokens <= 3_000 * 0.9 - 500, `${r.tokens} tokens`);
  assert.deepEqual(r.messages.slice(0, 2).map((m) => m.role), ['system', 'user']);
  assert.ok(r.messages.length < rows.length);
  assert.equal(r.messages[2]!.role, 'assistant', 'the window starts at a step boundary');
  assert.match(r.messages.at(-1)!.content ?? '', /page 10/, 'the newest step is kept');
});

test('the newest step alone too large: its tool results are cut', () => {
  const rows = transcript(1, 5_000);
  const r = fitTranscript(rows, { contextWindow: 2_000, maxOutput: 500 }, 200);
  assert.equal(r.messages.length, 4);
  assert.ok((r.messages[3]!.content ?? '').length < 5_000 * 7, 'cut');
});
