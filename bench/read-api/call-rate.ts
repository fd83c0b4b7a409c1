// The loop the per-call cost benchmarks share (key-auth-cost.ts, rate-limit-cost.ts): concurrent
// callers repeating one call until a deadline, and the median of a variant's rounds.

/** Calls per second that `callers` concurrent loops of `call` reach in `seconds`. */
export async function callRate(
  call: () => Promise<unknown>,
  callers: number,
  seconds: number,
): Promise<number> {
  const end = performance.now() + seconds * 1000;
  let calls = 0;
  const caller = async () => {
    while (performance.now() < end) {
      await call();
      calls += 1;
    }
  };
  await Promise.all(Array.from({ length: callers }, caller));
  return calls / seconds;
}

/** The middle of a variant's rounds (the upper middle of an even count); 0 when there are none. */
export function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] ?? 0;
}
