/**
 * Reading model replies. Reasoning models served through OpenAI-compatible servers
 * (deepseek-r1, qwq — Firecrawl's own Ollama example is deepseek-r1) put their chain of thought
 * in `<think>…</think>` before the answer; prompt-mode JSON often comes in a ```json fence or
 * with a sentence around it.
 */
export function stripThinking(text: string): string {
  return text.replace(/<think>[\s\S]*?<\/think>/gi, '').replace(/^[\s\S]*?<\/think>/i, '').trim();
}

export type ParsedJson = { ok: true; value: unknown } | { ok: false; error: string };

export function parseJsonReply(text: string | null | undefined): ParsedJson {
  if (text == null || !text.trim()) return { ok: false, error: 'the reply was empty' };
  const body = stripThinking(text);
  const candidates = [body];
  const fence = /```(?:json|JSON)?\s*\n?([\s\S]*?)```/.exec(body);
  if (fence) candidates.push(fence[1]!.trim());
  const first = body.search(/[[{]/);
  if (first >= 0) {
    const close = body[first] === '{' ? '}' : ']';
    const last = body.lastIndexOf(close);
    if (last > first) candidates.push(body.slice(first, last + 1));
  }
  for (const c of candidates) {
    try {
      return { ok: true, value: JSON.parse(c) };
    } catch {
      /* next candidate */
    }
  }
  try {
    JSON.parse(body);
  } catch (e) {
    return { ok: false, error: `the reply is not valid JSON (${e instanceof Error ? e.message : String(e)})` };
  }
  return { ok: false, error: 'the reply is not valid JSON' };
}
