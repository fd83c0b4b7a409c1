import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { Test } from 'tap';
import { projectRoot } from '../../src/adapters/config/environment.ts';

// The previous release, checked out beside this one (docs/upgrading.md, "The compatibility test"):
// the newest tag v0.* that is an ancestor of HEAD (not HEAD's own), or, in a clone without tags, the
// commit named below. Its processes run with this checkout's node_modules, so every package its
// lockfile pins must be installed here at the same version.

/**
 * The newest release's commit (v0.8, the landed main of 2026-11-30, stop 54), used when the clone holds no
 * v0.* tag: a clone of `main` alone may come without tags, and the test must still check the same
 * release. Moved with each new tag (docs/upgrading.md, "Releases").
 */
export const UNTAGGED_PREVIOUS = '525226bd14b7cd8bd7168a7421101bf8251c22bf';

const git = (args: string[]) =>
  execFileSync('git', args, { cwd: projectRoot, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();

const succeeds = (args: string[]) => {
  try {
    git(args);
    return true;
  } catch {
    return false;
  }
};

/** The previous release's tag or commit, checked to be in this clone's history; throws saying why not. */
export function previousRelease(): { ref: string; commit: string } {
  const tags = git([
    'tag',
    '--list',
    'v0.*',
    '--merged',
    'HEAD',
    '--no-contains',
    'HEAD',
    '--sort=-v:refname',
  ]);
  const ref = tags.split('\n').find((tag) => tag !== '') ?? UNTAGGED_PREVIOUS;
  const shallow = git(['rev-parse', '--is-shallow-repository']) === 'true';
  const missing =
    `the previous release ${ref} is not in this clone's history${shallow ? ' (a shallow clone)' : ''}: ` +
    'the upgrade test needs the whole history and the tags (git fetch --unshallow --tags; in CI a clone ' +
    'with its full history, e.g. fetch-depth: 0)';
  if (!succeeds(['rev-parse', '--verify', '--quiet', `${ref}^{commit}`])) throw new Error(missing);
  const commit = git(['rev-parse', `${ref}^{commit}`]);
  if (!succeeds(['merge-base', '--is-ancestor', commit, 'HEAD']))
    throw new Error(`the previous release ${ref} (${commit}) is not an ancestor of HEAD`);
  return { ref, commit };
}

type Lockfile = { packages: Record<string, { version?: string; link?: boolean }> };

/**
 * The packages the release's lockfile pins that this checkout's lockfile (what node_modules holds)
 * has at another version or not at all; empty when its processes can run on this node_modules.
 */
export function lockfileMismatches(commit: string): string[] {
  const then = JSON.parse(git(['show', `${commit}:package-lock.json`])) as Lockfile;
  const now = JSON.parse(readFileSync(path.join(projectRoot, 'package-lock.json'), 'utf8')) as Lockfile;
  return Object.entries(then.packages)
    .filter(([name, pinned]) => name !== '' && !pinned.link && now.packages[name]?.version !== pinned.version)
    .map(([name, pinned]) => `${name} ${pinned.version} (here: ${now.packages[name]?.version ?? 'absent'})`);
}

/** A detached worktree of `commit` in a temporary folder, with this checkout's node_modules; removed at teardown. */
export function checkoutRelease(t: Test, commit: string): string {
  const dir = path.join(mkdtempSync(path.join(tmpdir(), 'chronomap-previous-')), 'checkout');
  git(['worktree', 'add', '--detach', dir, commit]);
  t.teardown(() => {
    succeeds(['worktree', 'remove', '--force', dir]);
    rmSync(path.dirname(dir), { recursive: true, force: true });
    succeeds(['worktree', 'prune']);
  });
  symlinkSync(realpathSync(path.join(projectRoot, 'node_modules')), path.join(dir, 'node_modules'));
  return dir;
}
