import { isUnlimited, type Viewer } from '../access.ts';
import { rateRefusal, RateLimitedError } from './rate-limits.ts';
import type { ConcurrencyClass, ConcurrencyPolicy } from './concurrency-policy.ts';

// Fair sharing of the database (issue 30 §2). A request whose cost grows with the data (a collection
// list with `where`/`sort`, an /api/v1 list or a custom date field, OGC items, an export) holds a
// connection for as long as its statements run, so twenty of them from one anonymous address took the
// pool from everyone. Each such request takes a place of its class while it runs and gives it back
// when its answer is finished or its client is gone:
// - per client: an account has `perAccount` places of a class, an anonymous address `perAddress`;
// - together, anonymous callers and accounts of a low trust level (`lowTrustLevel` and below, which
//   anyone can get by registering) have at most `lowTrustShare` places of a class, so that they
//   can never take the whole pool (`collections`: the HTTP routes' pool; `reads` and `exports`: the
//   read API's pools) and logged-in users and the health check always find a connection.
// One place more is refused at once with the spec's 429 (nothing waits in a queue: a waiting request
// would hold its client's connection and memory instead). Admins and level 5 are never limited.
// The places are counted in each API process, as its pools are.

/** What each class is called in a refusal, and how soon a place is likely to be free again. */
const CLASS_FACTS: Record<ConcurrencyClass, { what: string; retryAfterSeconds: number; code: string }> = {
  collections: { what: 'collection lists', retryAfterSeconds: 2, code: 'TOO_MANY_CONCURRENT_REQUESTS' },
  reads: {
    what: 'costly reads (event lists, custom date fields, OGC items)',
    retryAfterSeconds: 2,
    code: 'TOO_MANY_CONCURRENT_REQUESTS',
  },
  // An export streams for as long as its client takes.
  exports: { what: 'exports', retryAfterSeconds: 5, code: 'TOO_MANY_EXPORTS' },
};

/** The code of a refusal because the low-trust share of a class is in use. */
const SHARE_FULL_CODE = 'ANONYMOUS_SHARE_FULL';

/** Who takes a place: the caller (null: anonymous) and, for anonymous callers, their address. */
type PlaceTaker = { viewer: Viewer; address: string };

/** Gives a place back; calling it again does nothing. */
type Release = () => void;

/**
 * The places in use in one process, by class: per client and the low-trust share. `take` either
 * returns the release of the place it took or throws the 429 (RateLimitedError) that refuses it.
 */
export class ConcurrencyLedger {
  readonly #policy: ConcurrencyPolicy;
  /** `class client` -> places held. */
  readonly #byClient = new Map<string, number>();
  /** Places held by the low-trust share, per class. */
  readonly #shared = new Map<ConcurrencyClass, number>();

  constructor(policy: ConcurrencyPolicy) {
    this.#policy = policy;
  }

  /** Places of `kind` that `client` (`user:<id>` or `ip:<address>`) holds now; for tests and metrics. */
  held(kind: ConcurrencyClass, client: string): number {
    return this.#byClient.get(`${kind} ${client}`) ?? 0;
  }

  /** Places of `kind` the low-trust share holds now. */
  sharedInUse(kind: ConcurrencyClass): number {
    return this.#shared.get(kind) ?? 0;
  }

  take(kind: ConcurrencyClass, taker: PlaceTaker, now: Date): Release {
    const { viewer } = taker;
    if (viewer && isUnlimited(viewer)) return () => {};
    const limits = this.#policy.classes[kind];
    const facts = CLASS_FACTS[kind];
    const key = `${kind} ${viewer ? `user:${viewer.id}` : `ip:${taker.address}`}`;
    const own = viewer ? limits.perAccount : limits.perAddress;
    const lowTrust =
      viewer === null ||
      (this.#policy.lowTrustLevel !== null && viewer.trustLevel <= this.#policy.lowTrustLevel);
    const refusal = (limit: number) =>
      rateRefusal('burst', limit, new Date(now.getTime() + facts.retryAfterSeconds * 1000), now);

    const holding = this.#byClient.get(key) ?? 0;
    if (own !== null && holding >= own) {
      throw new RateLimitedError(
        refusal(own),
        `Too many ${facts.what} at once: at most ${own} per client run at the same time; retry when one has ended`,
        facts.code,
      );
    }
    const sharing = this.#shared.get(kind) ?? 0;
    const share = lowTrust ? limits.lowTrustShare : null;
    if (share !== null && sharing >= share) {
      throw new RateLimitedError(
        refusal(share),
        `Too many ${facts.what} from anonymous and low-trust callers at once: together they run at most ${share} ` +
          'at the same time on this server; retry shortly (an account has places of its own)',
        SHARE_FULL_CODE,
      );
    }
    this.#byClient.set(key, holding + 1);
    if (lowTrust) this.#shared.set(kind, sharing + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#byClient.get(key) ?? 1) - 1;
      if (left > 0) this.#byClient.set(key, left);
      else this.#byClient.delete(key);
      if (lowTrust) this.#shared.set(kind, Math.max(0, (this.#shared.get(kind) ?? 1) - 1));
    };
  }
}
