import { OWN_ENTRY_FILES, runUnitFiles } from './unit-tier.ts';

await runUnitFiles(OWN_ENTRY_FILES, 'the unit files with an entry of their own');
