import path from 'node:path';
import { loadAccessPolicy } from '../../../../src/adapters/config/access-policy.ts';
import { projectRoot } from '../../../../src/adapters/config/environment.ts';
import type { Viewer } from '../../../../src/domain/access.ts';
import type { Role, TrustLevel } from '../../../../src/domain/accounts/users.ts';
import { memoryAccounts } from '../../../fakes/accounts/accounts.ts';
import { plainPasswordHasher } from '../../../fakes/accounts/password-hasher.ts';
import { memoryQuotas } from '../../../fakes/accounts/quotas.ts';
import { memoryCollectionRepository } from '../../../fakes/collections/collection-repository.ts';
import { testClock } from '../accounts/account-use-case-fakes.ts';

// The collection use cases' collaborators for the fast tier, all shared in-memory fakes that pass
// the behaviour suites of their Postgres adapters: the documents, the sessions a user change ends,
// the events quota (limits of config/quotas.yaml) and the password hasher. A user is made in each
// store that keeps accounts, with the same id in all of them, as the one `users` table has it.

const policy = loadAccessPolicy(path.join(projectRoot, 'config', 'quotas.yaml'));

export function collectionUseCaseDeps() {
  const clock = testClock();
  const accounts = memoryAccounts(clock);
  const quotas = memoryQuotas(policy, clock);
  const repository = memoryCollectionRepository(clock);
  const deps = {
    repository,
    passwords: plainPasswordHasher(),
    sessions: accounts.sessions,
    quotas,
    defaultTrustLevel: policy.defaultTrustLevel,
    clock,
    policy,
    /** A user in every store, as a viewer; `live` sessions of theirs are opened. */
    async user(email: string, standing: { role?: Role; trustLevel?: TrustLevel } = {}) {
      const role = standing.role ?? 'user';
      const trustLevel = standing.trustLevel ?? 1;
      const passwordHash = await deps.passwords.hash('a password of the user');
      const id = await repository.insert('users', { email, passwordHash, role, trustLevel });
      const account = await accounts.users.upsert({ email, passwordHash, role, trustLevel });
      if (account.id !== id || quotas.addUser({ role, trustLevel }) !== id)
        throw new Error('the stores numbered the user differently');
      return { id, email, role, trustLevel } satisfies Exclude<Viewer, null>;
    },
    /** A live session of the user's: its id. */
    async session(userId: number) {
      const expires = new Date(clock.now().getTime() + 3_600_000);
      return (await accounts.sessions.create(userId, expires, clock.now())).id;
    },
    /** The events the user has stored, as the quota counts them. */
    async eventsCounted(userId: number) {
      return (await quotas.status(userId)).find((s) => s.quota === 'totalEvents')?.used;
    },
  };
  return deps;
}

export type CollectionUseCaseDeps = ReturnType<typeof collectionUseCaseDeps>;

/** An owner with a public and a private catalog, a dataset in each, and a stranger and an admin. */
export async function ownedHierarchy(deps: CollectionUseCaseDeps) {
  const owner = await deps.user('owner@example.org');
  const stranger = await deps.user('stranger@example.org');
  const admin = await deps.user('admin@example.org', { role: 'admin', trustLevel: 5 });
  const catalog = (slug: string, isPublic: boolean) =>
    deps.repository.insert('catalogs', { slug, title: slug, isPublic, createdBy: owner.id });
  const open = await catalog('open', true);
  const closed = await catalog('closed', false);
  const dataset = (catalogId: number, slug: string) =>
    deps.repository.insert('datasets', { catalog: catalogId, slug, title: slug, createdBy: owner.id });
  return {
    owner,
    stranger,
    admin,
    catalogs: { open, closed },
    sets: { open: await dataset(open, 'open-set'), closed: await dataset(closed, 'closed-set') },
  };
}
