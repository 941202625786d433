import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agentResultsServed, withheldAgentEvent } from './agent-results';

test('only a succeeded job has its results served', () => {
  assert.equal(agentResultsServed('succeeded'), true);
  for (const s of ['running', 'cancelling', 'cancelled', 'credit_limit_reached', 'refused', 'internal', 'parent_finished']) assert.equal(agentResultsServed(s), false, s);
});

test('a withheld event keeps the run\'s shape and drops what the run read or the model wrote', () => {
  const started = withheldAgentEvent('tool_call.started', { eventId: 'e1', toolCallId: 'c1', toolName: 'scrape', parameters: { url: 'https://secret.example/x' } });
  assert.deepEqual(started, { eventId: 'e1', toolCallId: 'c1', toolName: 'scrape' });
  const finished = withheldAgentEvent('tool_call.finished', { toolCallId: 'c1', toolName: 'search', result: { results: [{ url: 'https://a' }] }, creditsUsed: 2 });
  assert.deepEqual(finished, { toolCallId: 'c1', toolName: 'search', creditsUsed: 2 });
  // A tool name the model made up is a channel of its words too.
  assert.equal(withheldAgentEvent('tool_call.started', { toolName: 'the-answer-is-42' }).toolName, 'unknown');
  const art = withheldAgentEvent('artifact.updated', { artifact: { kind: 'markdown', artifactId: 'page-0123abcd4567', path: '/workspace/pages/secret.example/x.md', snapshotId: 's1', change: 'init', itemCount: 3 } });
  assert.deepEqual(art, { artifact: { kind: 'markdown', artifactId: 'page', snapshotId: 's1', change: 'init' } });
  const toolError = withheldAgentEvent('error.occurred', { error: { code: 'internal', source: 'tool', retryable: false, message: 'scrape: https://secret.example/x is outside …' }, retryable: false });
  assert.equal((toolError.error as { code: string }).code, 'internal');
  assert.doesNotMatch((toolError.error as { message: string }).message, /secret/);
  // The system's own messages stay (credit limit, cancellation).
  const billing = { error: { code: 'credit_limit_reached', source: 'billing', retryable: false, message: 'The agent reached its credit limit …' } };
  assert.deepEqual(withheldAgentEvent('error.occurred', billing), billing);
  assert.deepEqual(withheldAgentEvent('run.started', { eventId: 'e0' }), { eventId: 'e0' });
});
