import type { FastifyInstance } from 'fastify';

// Every route an app registered, as Fastify saw it (an onRoute hook installed before any route), so
// a test or a generated document can go through all of them rather than a hand-kept list.

type RegisteredRoute = { method: string; url: string };

const registries = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Call before the first route is added: routes of plugins registered later are recorded too. */
export function recordRoutes(app: FastifyInstance): void {
  const routes: RegisteredRoute[] = [];
  registries.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
}

/** The routes recorded for this app (HEAD twins of GET routes included), in registration order. */
export function registeredRoutes(app: FastifyInstance): RegisteredRoute[] {
  return [...(registries.get(app) ?? [])];
}
