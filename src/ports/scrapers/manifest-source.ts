/** Where a scraper repo's `scrapers.yml` comes from (the uploaded code or its git repo), parsed. */
export interface ManifestSource {
  /** The parsed `scrapers.yml` of the repo; throws ManifestUnreadableError when it cannot be read or parsed. */
  load(repo: {
    sourceType: 'git' | 'upload';
    code: Record<string, string> | null;
    gitUrl: string | null;
    gitBranch: string | null;
  }): Promise<unknown>;
}
