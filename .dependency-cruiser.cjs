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
        'HTTP app never knows the pages; the composition modules (src/composition/) hand them to it as functions.',
      severity: 'error',
      from: { path: '^src/adapters/(http|web)/' },
      to: { path: '^src/adapters/pages/' },
    },
    {
      name: 'adapters-do-not-import-the-root',
      comment:
        'Only the entry point (src/main.ts), the composition root (src/compose.ts) and the composition ' +
        'modules (src/composition/, one per feature) know every adapter; an adapter importing them would be ' +
        'the one arrow running up.',
      severity: 'error',
      from: { path: '^src/adapters/' },
      to: { path: '^src/((compose|main)\\.ts$|composition/)' },
    },
    {
      name: 'read-model-only-through-its-port',
      comment:
        "The read model (src/adapters/postgres/read/) is the EventReader port: the read feature's composition " +
        'module (src/composition/read.ts) builds it from index.ts and everyone else asks the port, so its SQL, ' +
        'caches and pools stay its own business.',
      severity: 'error',
      from: { pathNot: '^src/(composition/read\\.ts$|adapters/postgres/read/)' },
      to: { path: '^src/adapters/postgres/read/' },
    },
    {
      name: 'read-model-entry-is-its-index',
      comment: "The read feature's composition module knows only the folder index, not the files behind it.",
      severity: 'error',
      from: { path: '^src/composition/read\\.ts$' },
      to: {
        path: '^src/adapters/postgres/read/',
        pathNot: '^src/adapters/postgres/read/index\\.ts$',
      },
    },
    {
      name: 'file-system-only-where-files-live',
      comment:
        'Ingest files are written through FileStore and read through SourceFiles (src/adapters/files/). The other ' +
        'modules that touch the file system, each for a reason of its own: config/environment.ts and ' +
        'config/access-policy.ts read the configuration (.env, config/quotas.yaml); postgres/migrator.ts reads ' +
        'migrations/; postgres/embedded-cluster.ts keeps the private PostgreSQL cluster under the data directory; ' +
        'postgres/backup.ts writes and reads the backup folder the operator names (chronomap backup/restore); ' +
        'geocoding/gazetteer-data.ts builds and reads the compact gazetteer file under node_modules/.cache; ' +
        "web/scraper-helper.ts packs the scraper helper packages' files into the tarball and the wheel it serves; " +
        'scrapers/git-manifest-reader.ts clones a repo into a temporary directory to read its manifest; web/explore.ts ' +
        "reads MapLibre's version and the country outlines from node_modules and web/static-files.ts serves the " +
        "files of web/ (the Explore page's, the account pages' scripts) and MapLibre's; src/main.ts checks the file " +
        'seed-demo is given exists.',
      severity: 'error',
      from: {
        path: '^src/',
        pathNot:
          '^src/(main\\.ts$|adapters/files/|adapters/config/(environment|access-policy)\\.ts$|' +
          'adapters/postgres/(migrator|embedded-cluster|backup)\\.ts$|adapters/scrapers/git-manifest-reader\\.ts$|' +
          'adapters/geocoding/gazetteer-data\\.ts$|adapters/web/scraper-helper\\.ts$|' +
          'adapters/web/(explore|static-files)\\.ts$)',
      },
      to: { dependencyTypes: ['core'], path: '^(node:)?fs(/promises)?$' },
    },
    {
      name: 'features-meet-through-ports',
      comment:
        "A feature's adapters do not reach into another feature's adapters (src/adapters/<technology>/<feature>/): " +
        'features meet through ports and use cases, and what several features share sits at the top of the ' +
        "technology folder (the composition root, src/compose.ts, sets the order of the features' routes). One " +
        'file is exempted: postgres/ingest/event-batch-writer takes the events quota (postgres/accounts/quotas ' +
        'takeEventsIn) inside the transaction that stores the batch, so that a refusal rolls the batch back; ' +
        'through the Quotas port it would run on another connection and lose that (docs/architecture.md, ' +
        '"Feature boundaries").',
      severity: 'error',
      from: {
        path: '^src/adapters/[a-z]+/(read|ingest|scrapers|accounts|collections|site|subscriptions|email)/',
        pathNot: '^src/adapters/postgres/ingest/event-batch-writer\\.ts$',
      },
      to: {
        path: '^src/adapters/[a-z]+/(read|ingest|scrapers|accounts|collections|site|subscriptions|email)/',
        pathNot: '^src/adapters/[a-z]+/$1/',
      },
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
