import type { Durability } from '../../src/adapters/postgres/embedded-cluster.ts';

/**
 * The benchmark cluster's durability: `disposable` (fsync off) unless BENCH_DURABILITY=durable, which
 * runs it as `chronomap start` runs the embedded default, to measure what fsync costs an import.
 */
export function benchDurability(): Durability {
  const wanted = process.env.BENCH_DURABILITY ?? 'disposable';
  if (wanted !== 'durable' && wanted !== 'disposable')
    throw new Error(`BENCH_DURABILITY must be durable or disposable (got "${wanted}")`);
  return wanted;
}
