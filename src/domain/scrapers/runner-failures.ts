// Why the runner did not run a scraper, as the run use cases tell it apart (retry later, fail the
// run, refuse the request): the runner client adapter throws it, the application decides.

type RunnerFailureKind = 'busy' | 'unavailable' | 'unauthorized' | 'rejected' | 'aborted';

/** The runner did not run the scraper: at capacity, unreachable, wrong key, or a refused request. */
export class RunnerError extends Error {
  readonly kind: RunnerFailureKind;
  readonly code: string | undefined;

  constructor(kind: RunnerFailureKind, message: string, code?: string) {
    super(message);
    this.name = 'RunnerError';
    this.kind = kind;
    this.code = code;
  }
}
