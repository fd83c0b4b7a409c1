import { runUnitShard } from './unit-tier.ts';

await runUnitShard(1, 2);
