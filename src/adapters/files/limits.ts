/** Widest sheet or CSV header accepted; wider files fail with TOO_MANY_COLUMNS rather than exhaust memory. */
export const MAX_COLUMNS = 10_000;
