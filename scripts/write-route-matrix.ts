// Writes the route authorization matrix into docs/api.md from the table the matrix test runs
// (test/integration/service/route-authorization-table.ts); that test fails when the doc is not current.
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { projectRoot } from '../src/adapters/config/environment.ts';
import { apiDocWithMatrix } from '../test/integration/service/route-authorization-doc.ts';

const file = path.join(projectRoot, 'docs', 'api.md');
writeFileSync(file, await apiDocWithMatrix(readFileSync(file, 'utf8'), file));
process.stdout.write('wrote the route authorization matrix into docs/api.md\n');
