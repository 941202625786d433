/** Audio and video of web pages: finding, guarded downloading, converting (ffmpeg), yt-dlp behind a guarded proxy. See README.md. */
export { mediaSources, candidatesFor, type MediaSources } from './sources';
export { extractMedia, type ExtractRequest, type ExtractedMedia, type MediaFile, type MediaKind } from './extract';
export { startGuardedProxy, type GuardedProxy, type GuardedProxyOptions } from './guard-proxy';
export { findMediaTools, runTool, type MediaTools } from './tools';
export { probe, toMp3, toVideo, type Probe } from './convert';
export { pickFormat, resolveWithYtDlp } from './ytdlp';
