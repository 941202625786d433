import { z } from 'zod';

/** Browser actions, exactly the spec's Actions table. */
const selector = z.string().min(1).max(2_000);

const waitAction = z
  .strictObject({ type: z.literal('wait'), milliseconds: z.int().min(1).max(300_000).optional(), selector: selector.optional() })
  .refine((a) => (a.milliseconds === undefined) !== (a.selector === undefined), {
    message: 'wait action needs exactly one of milliseconds or selector',
  });

const screenshotAction = z.strictObject({
  type: z.literal('screenshot'),
  fullPage: z.boolean().default(false),
  quality: z.int().min(1).max(100).optional(),
  viewport: z.strictObject({ width: z.int().min(1).max(7680), height: z.int().min(1).max(7680) }).optional(),
});

const clickAction = z.strictObject({ type: z.literal('click'), selector, all: z.boolean().default(false) });
const writeAction = z.strictObject({ type: z.literal('write'), text: z.string().max(100_000) });
const pressAction = z.strictObject({ type: z.literal('press'), key: z.string().min(1).max(100) });
const scrollAction = z.strictObject({
  type: z.literal('scroll'),
  direction: z.enum(['up', 'down']).default('down'),
  selector: selector.optional(),
});
const scrapeAction = z.strictObject({ type: z.literal('scrape') });
const executeJavascriptAction = z.strictObject({ type: z.literal('executeJavascript'), script: z.string().min(1).max(100_000) });
const pdfAction = z.strictObject({
  type: z.literal('pdf'),
  format: z.enum(['A0', 'A1', 'A2', 'A3', 'A4', 'A5', 'A6', 'Letter', 'Legal', 'Tabloid', 'Ledger']).default('Letter'),
  landscape: z.boolean().default(false),
  scale: z.number().min(0.1).max(2).default(1),
});

export const actionSchema = z.discriminatedUnion('type', [
  waitAction, screenshotAction, clickAction, writeAction, pressAction, scrollAction, scrapeAction,
  executeJavascriptAction, pdfAction,
]);

export const actionsSchema = z.array(actionSchema).max(50);
export type Action = z.output<typeof actionSchema>;
