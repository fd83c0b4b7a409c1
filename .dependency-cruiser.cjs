// The hexagon's direction, checked on every test run: the domain is pure, use cases see only the
// domain and the ports, and nothing inside the hexagon reaches for an adapter.
module.exports = {
  forbidden: [
    {
      name: 'domain-is-pure',
      comment:
        'src/domain may import only other domain modules: no ports, adapters, packages or node built-ins.',
      severity: 'error',
      from: { path: '^src/domain/' },
      to: { pathNot: '^src/domain/' },
    },
    {
      name: 'application-sees-domain-and-ports',
      comment: 'Use cases depend on the domain and on port interfaces only.',
      severity: 'error',
      from: { path: '^src/application/' },
      to: { pathNot: '^src/(domain|ports|application)/' },
    },
    {
      name: 'ports-are-interfaces',
      comment: 'Ports describe what the application needs in domain terms; they import only the domain.',
      severity: 'error',
      from: { path: '^src/ports/' },
      to: { pathNot: '^src/(domain|ports)/' },
    },
    {
      name: 'http-does-not-import-admin',
      comment:
        'The arrow runs admin → http: the server pages use the HTTP adapter (cookies, the template tag), the ' +
        'HTTP app never knows the pages; the composition root mounts them (src/adapters/admin/admin-pages.ts).',
      severity: 'error',
      from: { path: '^src/adapters/(http|web)/' },
      to: { path: '^src/adapters/admin/' },
    },
    {
      name: 'adapters-do-not-import-the-root',
      comment:
        'Only the entry point (src/main.ts) and the composition root (src/compose.ts) know every adapter; ' +
        'an adapter importing them would be the one arrow running up.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/(compose|main)\\.ts$' },
    },
    {
      name: 'no-circular',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { extensions: ['.ts', '.js'] },
  },
};
