import { Parser } from 'htmlparser2';

/**
 * A page's own media, in the order the media step tries them: `<video>`/`<audio>` elements (their
 * `src`, then their `<source>` children, in document order) and the Open Graph tags
 * (`og:video`, `og:video:url`, `og:video:secure_url`, and the `og:audio` ones). Relative URLs are
 * resolved against the page (and its `<base href>`); only http(s) URLs are kept, each once.
 * Linear in the page (a streaming parse); at most MAX per kind.
 */
export interface MediaSources {
  video: string[];
  audio: string[];
}

const MAX = 20;
const OG = /^og:(video|audio)(?::(?:url|secure_url))?$/;

export function mediaSources(html: string, pageUrl: string): MediaSources {
  const out: MediaSources = { video: [], audio: [] };
  let base = pageUrl;
  const media: ('video' | 'audio')[] = [];
  const add = (kind: 'video' | 'audio', raw: string | undefined) => {
    if (!raw || out[kind].length >= MAX) return;
    let u: URL;
    try {
      u = new URL(raw.trim(), base);
    } catch {
      return;
    }
    if ((u.protocol === 'http:' || u.protocol === 'https:') && !out[kind].includes(u.href)) out[kind].push(u.href);
  };
  const parser = new Parser(
    {
      onopentag(name, a) {
        if (name === 'base' && a.href) {
          try {
            base = new URL(a.href, pageUrl).href;
          } catch {
            // an unusable base is ignored, as browsers do
          }
        } else if (name === 'video' || name === 'audio') {
          media.push(name);
          add(name, a.src);
        } else if (name === 'source' && media.length) {
          add(media[media.length - 1]!, a.src);
        } else if (name === 'meta') {
          const m = OG.exec((a.property ?? a.name ?? '').toLowerCase());
          if (m) add(m[1] as 'video' | 'audio', a.content);
        }
      },
      onclosetag(name) {
        if ((name === 'video' || name === 'audio') && media.length) media.pop();
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  );
  parser.write(html);
  parser.end();
  return out;
}

/** What each format tries first: video for `video`; audio, then the audio track of a video, for `audio`. */
export function candidatesFor(kind: 'audio' | 'video', s: MediaSources): string[] {
  return kind === 'video' ? s.video : [...s.audio, ...s.video];
}
