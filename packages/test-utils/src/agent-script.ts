import type { FakeChatRequest, FakeReply } from './fake-openai';

/**
 * The scripted model of agent e2e tests: each job's prompt carries a `[tag]`, and a script per
 * tag answers each step of that job's runs (sub-agents are tagged by their own prompts).
 */
export type AgentScript = (step: number, r: FakeChatRequest) => FakeReply | Promise<FakeReply>;

/** The run's tag: the last `[tag]` of its user turn (a thread's later turn quotes the earlier turns' prompts first). */
export const agentRunTag = (r: FakeChatRequest): string =>
  [...String(r.messages.find((m) => m.role === 'user')?.content ?? '').matchAll(/\[([\w-]+)\]/g)].at(-1)?.[1] ?? '';

/** The step a model request is for: the assistant turns it carries, plus one. */
export const agentStepOf = (r: FakeChatRequest): number => r.messages.filter((m) => m.role === 'assistant').length + 1;

/** One tool call of a scripted reply (its id given, or the fake server's). */
export const toolCall = (name: string, args: unknown, id?: string) => ({ name, arguments: args, ...(id ? { id } : {}) });
