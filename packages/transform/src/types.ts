/** Shapes of the HTML transform: what to compute and what comes out. */



export interface TransformOptions {
  onlyMainContent: boolean;
  includeTags?: string[];
  excludeTags?: string[];
  removeBase64Images: boolean;
  /** Which outputs to compute; markdown is the expensive one, so it is computed only when asked. */
  want: { markdown: boolean; html: boolean; links: boolean; images: boolean };
}

export type MetaValue = string | string[];

export interface TransformResult {
  markdown?: string;
  html?: string;
  links?: string[];
  /** With `links`: the absolute URL of the page's `<link rel="canonical">` (crawls deduplicate by it); not a format. */
  canonical?: string;
  images?: string[];
  /** title, description, keywords, language, og*, favicon, other <meta> tags (camelCased names). */
  metadata: Record<string, MetaValue | null>;
}

