import type { DatabaseCheck, OutboxFacts, PostgisCheck, RunnerCheck } from '../../domain/site/health.ts';
import type { ReplicaCheck } from '../../domain/read/replica-choice.ts';

/** What the health use case asks of the database, in its own terms. */
export interface DatabaseStatus {
  ping(): Promise<DatabaseCheck>;
  postgis(): Promise<PostgisCheck>;
  /** Names of migration files not yet applied. Throws when the database cannot be read. */
  pendingMigrations(): Promise<string[]>;
}

export interface RunnerStatus {
  readonly url: string;
  check(): Promise<RunnerCheck>;
}

/** Names of required environment variables that are missing or invalid for the running configuration. */
export interface EnvironmentStatus {
  missingVariables(): string[];
}

/** The read replicas as the last probe found them (no I/O: the probe runs in the background). */
export interface ReplicaStatus {
  status(): ReplicaCheck[];
}

/** The e-mail outbox's figures (only where e-mail is configured). */
export interface EmailOutboxStatus {
  recentStatus(): Promise<OutboxFacts>;
}
