/** Names a scraper run for the runner (its run_id), unique across every process. */
export interface RunIds {
  /** A UUID for the runner's run_id. */
  next(): string;
}
