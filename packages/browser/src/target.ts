import { WdsError } from '@wds/errors';

export function parseTarget(raw: string): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WdsError('INVALID_URL', { message: 'Invalid URL: must be an absolute http(s) URL' });
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new WdsError('INVALID_URL', { message: `Invalid URL: unsupported scheme ${url.protocol} (must be http or https)` });
  }
  return url;
}
