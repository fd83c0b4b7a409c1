import type { EventExporter } from '../../../../src/ports/read/event-exporter.ts';
import type { EventReader } from '../../../../src/ports/read/event-reader.ts';
import type { TileReader } from '../../../../src/ports/read/tile-reader.ts';

// Recording fakes of the read ports, for the read use cases' tests that need to see the calls (what
// was asked, and that a refused request asked nothing) or an answer the in-memory read model
// (test/fakes/read/event-reader.ts) does not model: each answers what the test gives for the methods it expects, records
// every call with its arguments, and fails the test on a call it did not expect, so a test also
// sees that a refused request never reached the read model.

export type Call = { method: string; args: unknown[] };

function recording<Port extends object>(answers: Partial<Port>): { port: Port; calls: Call[] } {
  const calls: Call[] = [];
  const port = new Proxy({} as Port, {
    get(_target, method) {
      if (typeof method !== 'string' || method === 'then') return undefined;
      return (...args: unknown[]) => {
        calls.push({ method, args });
        const answer = (answers as Record<string, unknown>)[method];
        if (typeof answer !== 'function') throw new Error(`${method} was not expected in this test`);
        return (answer as (...given: unknown[]) => unknown)(...args);
      };
    },
  });
  return { port, calls };
}

export const fakeEventReader = (answers: Partial<EventReader>) => recording<EventReader>(answers);
export const fakeTileReader = (answers: Partial<TileReader>) => recording<TileReader>(answers);
export const fakeExporter = (answers: Partial<EventExporter>) => recording<EventExporter>(answers);
