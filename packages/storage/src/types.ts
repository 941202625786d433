/**
 * A store for files the service hands out by link (screenshots, action PDFs). Keys are
 * relative paths made of `[A-Za-z0-9._-]` segments; the content type follows from the
 * extension. Implementations: the local directory (LocalFileStore, the default) and an
 * S3-compatible bucket (S3FileStore).
 */
export interface StoredFile {
  key: string;
  contentType: FileContentType;
  size: number;
}

export type FileContentType = 'image/png' | 'image/jpeg' | 'application/pdf' | 'audio/mpeg' | 'video/mp4' | 'video/webm';

export interface FileBody {
  contentType: FileContentType;
  size: number;
  stream: NodeJS.ReadableStream;
}

export interface FileStore {
  /** Writes (or replaces: a retried activity writes the same key) the file. */
  put(key: string, bytes: Buffer): Promise<StoredFile>;
  /** The same from a file on this machine, moved or copied in without reading it into memory (media). */
  putFile(key: string, path: string): Promise<StoredFile>;
  /** The file, or null when it does not exist (expired and swept, or never written). */
  open(key: string): Promise<FileBody | null>;
  /** An absolute URL anyone holding it can GET until it expires (default lifetime of the store). */
  signedUrl(key: string, ttlSeconds?: number): Promise<string>;
  /** Deletes files written more than `olderThanMs` ago (only those whose key `only` accepts, when given); returns how many. */
  sweep(olderThanMs: number, only?: (key: string) => boolean): Promise<number>;
}
