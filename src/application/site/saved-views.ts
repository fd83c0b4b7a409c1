import { canReadView, canWriteView, requireViewer, type Viewer } from '../../domain/access.ts';
import { NotFoundError } from '../../domain/errors.ts';
import {
  parseViewChanges,
  parseViewFields,
  type SavedView,
  VIEW_CODE_PATTERN,
} from '../../domain/site/saved-views.ts';
import type { SavedViewStore } from '../../ports/site/saved-view-store.ts';

// Saved views and their embeds (issue 38 §1–2). Who may do what is src/domain/access.ts's
// canReadView / canWriteView; a view the caller may not read is "not found", like one that does not
// exist, so a private view's code reveals nothing.

export type SavedViewDeps = { views: SavedViewStore };

const notFound = () => new NotFoundError('no such view');

export async function createView(deps: SavedViewDeps, viewer: Viewer, body: unknown): Promise<SavedView> {
  const owner = requireViewer(viewer);
  return deps.views.create(owner.id, parseViewFields(body));
}

export async function listMyViews(deps: SavedViewDeps, viewer: Viewer): Promise<SavedView[]> {
  return deps.views.listByOwner(requireViewer(viewer).id);
}

/** A view by its code, for the API, `/v/{code}` and the embed: anyone it is readable by. */
export async function readView(deps: SavedViewDeps, viewer: Viewer, code: string): Promise<SavedView> {
  const view = VIEW_CODE_PATTERN.test(code) ? await deps.views.findByCode(code) : null;
  if (!view || !canReadView(viewer, view)) throw notFound();
  return view;
}

async function writableView(deps: SavedViewDeps, viewer: Viewer, code: string): Promise<SavedView> {
  requireViewer(viewer);
  const view = await readView(deps, viewer, code);
  // Someone else's public view is readable but not theirs to change: it looks missing, as elsewhere.
  if (!canWriteView(viewer, view)) throw notFound();
  return view;
}

export async function changeView(
  deps: SavedViewDeps,
  viewer: Viewer,
  code: string,
  body: unknown,
): Promise<SavedView> {
  const view = await writableView(deps, viewer, code);
  const changed = await deps.views.update(view.id, parseViewChanges(body));
  if (!changed) throw notFound();
  return changed;
}

export async function deleteView(deps: SavedViewDeps, viewer: Viewer, code: string): Promise<void> {
  const view = await writableView(deps, viewer, code);
  if (!(await deps.views.remove(view.id))) throw notFound();
}
