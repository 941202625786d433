import { parsePage, type Page } from './dom';

/** The page-level extractors take HTML or an already parsed page (parse once, read many). */
export type PageInput = string | Page;

export const asPage = (doc: PageInput): Page => (typeof doc === 'string' ? parsePage(doc) : doc);
