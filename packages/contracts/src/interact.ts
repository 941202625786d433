import { z } from 'zod';

/**
 * POST/DELETE /v2/scrape/{scrapeId}/interact, as Firecrawl's v2 docs (`scrape-execute`,
 * `features/interact`) and the JS SDK (`interact`, `stopInteraction`: ScrapeExecuteRequest,
 * BrowserExecuteResponse, BrowserDeleteResponse) define them.
 */

/** Firecrawl's default execution timeout, in seconds. */
export const DEFAULT_INTERACT_TIMEOUT_S = 30;

export const interactRequestSchema = z
  .strictObject({
    code: z.string().min(1).max(100_000).optional().describe('Playwright (Node) code run against the live `page`; top-level `await` works and the last expression is `result`. Wins over `prompt`.'),
    prompt: z.string().min(1).max(10_000).optional().describe('A natural-language task: a model writes Playwright code for it, which runs like `code` and comes back as `code`.'),
    language: z.enum(['node', 'python', 'bash']).default('node').describe('Only `node` runs here; `python` and `bash` answer 400 FEATURE_NOT_AVAILABLE.'),
    timeout: z.int().min(1).max(300).default(DEFAULT_INTERACT_TIMEOUT_S).describe('Execution timeout in seconds.'),
    origin: z.string().max(200).optional().describe('A caller label (accepted, not used).'),
  })
  .superRefine((o, ctx) => {
    if (!o.code?.trim() && !o.prompt?.trim()) ctx.addIssue({ code: 'custom', path: ['code'], message: "Either 'code' or 'prompt' must be provided" });
  });
export type InteractRequest = z.output<typeof interactRequestSchema>;

/** The answer of one interaction (Firecrawl's BrowserExecuteResponse, plus `code` for prompts). */
export const interactResponseSchema = z.strictObject({
  success: z.boolean().describe('The code ran to its end without an uncaught exception or timeout.'),
  result: z.string().nullable().optional().describe('The value of the last expression (strings as they are, other values as JSON); null for undefined.'),
  stdout: z.string().optional().describe('console.log/info/debug output.'),
  stderr: z.string().optional().describe('console.warn/error output.'),
  exitCode: z.int().optional().describe('0 done, 1 the code threw, 124 the timeout ended it.'),
  killed: z.boolean().optional().describe('The timeout ended the code.'),
  truncated: z.boolean().optional().describe('Output or result was cut at 1 MiB.'),
  error: z.string().optional().describe('The uncaught exception, or why the code was stopped.'),
  output: z.string().optional().describe('Prompts: the answer (the generated code\'s last value).'),
  code: z.string().optional().describe('Prompts: the Playwright code the model wrote and ran; send it as `code` to replay it without a model.'),
});
export type InteractResponse = z.output<typeof interactResponseSchema>;

export const interactStopResponseSchema = z.strictObject({
  success: z.literal(true),
  status: z.literal('stopped').optional(),
  sessionDurationMs: z.int().optional().describe('How long the session lived.'),
  creditsBilled: z.int().optional().describe('Browser minutes billed for the session.'),
  profileSaved: z.boolean().optional().describe('The browser state was written back to the scrape\'s profile (saveChanges).'),
});
export type InteractStopResponse = z.output<typeof interactStopResponseSchema>;
