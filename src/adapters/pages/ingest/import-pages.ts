import type { FastifyPluginAsync } from 'fastify';
import { importWizardPage } from './import-wizard.ts';
import { myImportsPages, type MyImportsDeps } from './my-imports.ts';
import { scheduledImportsPage } from './scheduled-imports-page.ts';

// The import pages of /account (issue 21): the wizard, my imports (with the admin's re-queue) and
// scheduled imports, each its own plugin with its own form parser and error pages.

export const importPages: FastifyPluginAsync<MyImportsDeps> = async (app, deps) => {
  await app.register(importWizardPage, { csrfSecret: deps.csrfSecret });
  await app.register(myImportsPages, deps);
  await app.register(scheduledImportsPage, deps);
};
