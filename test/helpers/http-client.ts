import http from 'node:http';
import type { FastifyInstance } from 'fastify';

// A plain HTTP client over a real socket, for tests of what travels on the wire: headers exactly as
// sent, bodies as raw bytes (no automatic decompression, unlike fetch).

export type RawResponse = { status: number; headers: http.IncomingHttpHeaders; body: Buffer };

export type RawClient = {
  base: string;
  request(
    path: string,
    options?: { method?: string; headers?: Record<string, string> },
  ): Promise<RawResponse>;
};

/** Listens on a free loopback port (closed with the app, when the test's services close). */
export async function listenOnLoopback(app: FastifyInstance): Promise<RawClient> {
  const address = await app.listen({ host: '127.0.0.1', port: 0 });
  const base = new URL(address);
  return {
    base: address,
    request: (path, options = {}) =>
      new Promise((resolve, reject) => {
        const request = http.request(
          {
            host: base.hostname,
            port: base.port,
            path,
            method: options.method ?? 'GET',
            headers: options.headers ?? {},
            agent: false,
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({
                status: response.statusCode ?? 0,
                headers: response.headers,
                body: Buffer.concat(chunks),
              }),
            );
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end();
      }),
  };
}
