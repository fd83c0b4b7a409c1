import type { SavedView, ViewFields } from '../../domain/site/saved-views.ts';

// Where saved views live. `create` draws the view's code (random, from the domain's alphabet).

export interface SavedViewStore {
  create(ownerId: number, fields: ViewFields): Promise<SavedView>;
  findByCode(code: string): Promise<SavedView | null>;
  findById(id: number): Promise<SavedView | null>;
  listByOwner(ownerId: number): Promise<SavedView[]>;
  update(id: number, changes: Partial<ViewFields>): Promise<SavedView | null>;
  remove(id: number): Promise<boolean>;
}
