/** Fetches a URL to a file with an SSRF guard and limits on size and time. */
export interface UrlFetcher {
  /**
   * Opens the URL (guarded, redirects followed); the body's chunks arrive as it is read, and reading
   * it throws once it passes the size limit or the deadline.
   */
  fetch(url: string): Promise<{
    body: AsyncIterable<Uint8Array>;
    contentType: string | null;
    fileName: string;
    /** The response's validators (ETag, Last-Modified), kept in the events' provenance. */
    etag?: string | null;
    lastModified?: string | null;
  }>;
}
