import type { Role } from '../accounts/users.ts';

// Who may use scrapers is decided in domain/access.ts (hasScraperAccess, canManageScraperRepo); how
// much is the quotas' (scraperRepos, scraperRunsPerDay in config/quotas.yaml, src/domain/accounts/quotas.ts).

export type Actor = { id: number; role: Role; trustLevel: number };
