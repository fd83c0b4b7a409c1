import { parse, YAMLParseError } from 'yaml';
import { ManifestUnreadableError } from '../../domain/scrapers/errors.ts';
import { MANIFEST_FILE } from '../../domain/scrapers/repos.ts';
import { FORBIDDEN_KEYS } from '../../domain/forbidden-keys.ts';
import type { ManifestSource } from '../../ports/scrapers/manifest-source.ts';

/** Reads the raw text of a git repo's manifest; see git-manifest-reader.ts. */
export type GitManifestReader = (gitUrl: string, branch: string) => Promise<string>;

/**
 * `scrapers.yml` from an uploaded code map, or from a git repo through `readGit`, parsed with
 * `yaml` (the domain validates the parsed value). YAML syntax errors name line and column.
 */
export function yamlManifestSource(readGit: GitManifestReader): ManifestSource {
  return {
    async load(repo) {
      let text: string;
      if (repo.sourceType === 'upload') {
        const content = repo.code?.[MANIFEST_FILE];
        if (content === undefined)
          throw new ManifestUnreadableError(`${MANIFEST_FILE}: not found at the repo root`);
        text = content;
      } else {
        if (!repo.gitUrl || !repo.gitBranch)
          throw new ManifestUnreadableError('the repo has no git URL or branch');
        text = await readGit(repo.gitUrl, repo.gitBranch);
      }
      return parseManifestText(text);
    },
  };
}

export function parseManifestText(text: string): unknown {
  try {
    // Aliases are refused outright (maxAliasCount 0): a manifest never needs them, and a billion
    // laughs document would otherwise expand in the worker.
    // Keys that reach Object.prototype are refused by name rather than carried into the domain.
    return parse(
      text,
      (key, value) => {
        if (typeof key === 'string' && FORBIDDEN_KEYS.has(key))
          throw new ManifestUnreadableError(`${MANIFEST_FILE}: the key "${key}" is not allowed`);
        return value;
      },
      { maxAliasCount: 0, uniqueKeys: true, prettyErrors: true },
    );
  } catch (error) {
    if (error instanceof ManifestUnreadableError) throw error;
    if (error instanceof YAMLParseError) {
      const where = error.linePos?.[0]
        ? ` (line ${error.linePos[0].line}, column ${error.linePos[0].col})`
        : '';
      throw new ManifestUnreadableError(
        `${MANIFEST_FILE}: invalid YAML${where}: ${error.message.split('\n')[0]}`,
      );
    }
    throw new ManifestUnreadableError(`${MANIFEST_FILE}: ${(error as Error).message}`);
  }
}
