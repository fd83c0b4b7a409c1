import { runUnitShard } from './unit-tier.ts';

await runUnitShard(0, 2);
