/**
 * The labelled test set. Each snippet is text with its PII marked inline as `[[KIND:value]]`
 * (KIND one of PII_KINDS); everything unmarked is not PII, including the look-alikes of the
 * negative snippets (order numbers, dates, versions, ISBNs, prices…). Written for this package:
 * contact pages, footers, invoices, tables, forms and prose in several languages, as markdown
 * produced from web pages looks.
 */
export interface Snippet {
  lang: string;
  text: string;
}
