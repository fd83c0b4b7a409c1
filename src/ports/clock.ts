/** The time now: the one clock of the codebase (the system clock in production, a fixed one in tests). */
export interface Clock {
  now(): Date;
}
