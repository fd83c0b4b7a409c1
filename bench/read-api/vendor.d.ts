// Neither package ships type declarations; the bench uses a few calls of each.
declare module 'autocannon' {
  type Result = {
    requests: { average: number; total: number };
    latency: { p50: number; p97_5: number; p99: number; average: number };
    non2xx: number;
    errors: number;
  };
  export default function autocannon(options: {
    url: string;
    connections: number;
    duration: number;
    headers?: Record<string, string>;
    /**
     * Each request's `setupRequest` may change it (its `path`) before it is sent; `onResponse` sees
     * its status. `context` is the connection's own object (one request in flight per connection).
     */
    requests?: Array<{
      setupRequest: (request: object, context: Record<string, number>) => object;
      onResponse?: (status: number, body: string, context: Record<string, number>) => void;
    }>;
  }): Promise<Result>;
}

declare module 'supercluster' {
  type Feature = {
    type: 'Feature';
    properties: Record<string, unknown>;
    geometry: { type: 'Point'; coordinates: number[] };
  };
  export default class Supercluster {
    constructor(options?: { radius?: number; maxZoom?: number; minPoints?: number });
    load(points: Feature[]): this;
    getClusters(bbox: [number, number, number, number], zoom: number): Feature[];
  }
}
