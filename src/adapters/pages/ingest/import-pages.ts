import type { FastifyPluginAsync } from 'fastify';
import { geocodingOutcomePage } from './geocoding-outcome-page.ts';
import { importWizardPage } from './import-wizard.ts';
import { myImportsPages, type MyImportsDeps } from './my-imports.ts';
import { scheduledImportsPage } from './scheduled-imports-page.ts';

// The import pages of /account (issue 21): the wizard, my imports (with the admin's re-queue),
// scheduled imports and a job's geocoding outcome (issue 28), each its own plugin with its own form parser and error pages.

export const importPages: FastifyPluginAsync<MyImportsDeps> = async (app, deps) => {
  await app.register(importWizardPage, { csrfSecret: deps.csrfSecret });
  await app.register(myImportsPages, deps);
  await app.register(scheduledImportsPage, deps);
  await app.register(geocodingOutcomePage, { ingest: deps.ingest, csrfSecret: deps.csrfSecret });
};
