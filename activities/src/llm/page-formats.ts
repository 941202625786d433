import { llmWork, queryFormatOf, wantsMarkdown, type ScrapeDocument, type ScrapeOptions } from '@wds/contracts';
import { WdsError } from '@wds/errors';
import {
  addUsage,
  answerQuestion,
  checkPromptInjection,
  cleanContent,
  emptyUsage,
  extractJson,
  findHighlights,
  llmFormatCredits,
  summarize,
  type CallOptions,
  type LlmClient,
  type Usage,
} from '@wds/llm';
import { brandPersonality, optionalWork, piiModelPass } from './optional-work';

/** What the model added to one page's document, and what it cost. */
export interface PageLlmResult {
  fields: { json?: unknown; summary?: string; answer?: string; highlights?: string; markdown?: string; branding?: ScrapeDocument['branding'] };
  warnings: string[];
  /** Credits on top of the page's base credits (Firecrawl's prices, packages/llm/src/credits.ts). */
  credits: number;
  usage: Usage;
}

interface JsonFormat {
  type: 'json';
  schema?: Record<string, unknown>;
  prompt?: string;
  checkPromptInjection?: boolean;
}

/**
 * The model-made parts of one page, in the order their meaning needs: the injection check
 * before anything reads the page with a prompt; onlyCleanContent before the formats, so they
 * read the cleaned markdown; then json, summary, question and highlights side by side.
 * Library calls only: the caller loads the page and stores the result (ids, not content,
 * cross Temporal).
 */
export async function runPageFormats(
  client: LlmClient,
  o: Pick<ScrapeOptions, 'formats' | 'onlyCleanContent'> & { redactPII?: ScrapeOptions['redactPII'] },
  doc: Pick<ScrapeDocument, 'markdown' | 'metadata' | 'branding'>,
  call: CallOptions,
): Promise<PageLlmResult> {
  const work = llmWork(o);
  const optional = optionalWork({ redactPII: false, ...o }, doc);
  const url = doc.metadata?.sourceURL as string | undefined;
  let page = { markdown: doc.markdown ?? '', url };
  const out: PageLlmResult = { fields: {}, warnings: [], credits: 0, usage: emptyUsage() };
  const note = (r: { usage?: Usage; warning?: string }) => {
    if (r.usage) out.usage = addUsage(out.usage, r.usage);
    if (r.warning) out.warnings.push(r.warning);
  };

  // The redactPII model pass comes first: no other call, and no field, sees what it removes.
  // Its price is redaction's 4 credits, already charged with the page.
  if (optional.pii) {
    const r = await piiModelPass(client, o, page.markdown, String(doc.metadata?.scrapeId ?? ''), url, call);
    note(r);
    page = { ...page, markdown: r.markdown };
    out.fields.markdown = r.markdown;
  }

  const json = o.formats.find((f) => f.type === 'json') as JsonFormat | undefined;
  let injectionCheck = false;
  if (json?.checkPromptInjection) {
    const check = await checkPromptInjection(client, page, call);
    note(check);
    if (check.verdict === 'injection') {
      throw new WdsError('FORBIDDEN', {
        code: 'SCRAPE_PROMPT_INJECTION_DETECTED',
        message: `Forbidden: a prompt-injection attempt was found in the page content${check.reason ? ` (${check.reason})` : ''}; extraction aborted. Retry without checkPromptInjection if this is a false positive.`,
      });
    }
    injectionCheck = check.verdict === 'safe';
  }

  let cleaned = false;
  if (work.clean) {
    const r = await cleanContent(client, page, call);
    note(r);
    cleaned = r.cleaned;
    if (r.cleaned) {
      page = { ...page, markdown: r.markdown };
      out.fields.markdown = r.markdown;
    }
  }

  const question = o.formats.find((f) => f.type === 'question') as { question: string } | undefined;
  const highlights = o.formats.find((f) => f.type === 'highlights') as { query: string } | undefined;
  const query = queryFormatOf(o);
  await Promise.all([
    // Firecrawl publishes no price for branding or its personality: no credits on top.
    optional.personality &&
      brandPersonality(client, doc.branding as Record<string, unknown>, page.markdown, url, call).then((r) => {
        note(r);
        out.fields.branding = { ...doc.branding!, personality: r.personality as NonNullable<ScrapeDocument['branding']>['personality'] };
      }),
    json && extractJson(client, { page, schema: json.schema, prompt: json.prompt, ...call }).then((r) => { note(r); out.fields.json = r.data; }),
    work.formats.includes('summary') && summarize(client, page, call).then((r) => { note(r); out.fields.summary = r.text; }),
    question && answerQuestion(client, page, question.question, call).then((r) => { note(r); out.fields.answer = r.text; }),
    highlights && findHighlights(client, page, highlights.query, call).then((r) => { note(r); out.fields.highlights = r.text; }),
    query && (query.quote ? findHighlights : answerQuestion)(client, page, query.prompt, call).then((r) => { note(r); out.fields.answer = r.text; }),
  ]);
  out.credits = llmFormatCredits({
    json: !!json,
    summary: work.formats.includes('summary'),
    // The deprecated `query` is billed as what it stands for.
    questions: (question ? 1 : 0) + (query && !query.quote ? 1 : 0),
    highlights: (highlights ? 1 : 0) + (query?.quote ? 1 : 0),
    cleanContent: cleaned,
    injectionCheck,
  });
  return out;
}

/**
 * The page's document with the model's fields merged in (`warning` joins every warning), and
 * without the markdown the model needed but the request did not ask for.
 */
export function withLlmFields<D extends ScrapeDocument>(doc: D, r: PageLlmResult, o: Pick<ScrapeOptions, 'formats'>): D {
  const merged = { ...doc, ...r.fields } as D & { warning?: string };
  if (!wantsMarkdown(o)) delete merged.markdown;
  const warnings = [(doc as { warning?: string }).warning, ...r.warnings].filter((w): w is string => !!w);
  if (warnings.length) merged.warning = warnings.join(' ');
  return merged;
}
