-- A recurring source's choice of the duplicate-rate review (issue 28 §2; docs/decisions.md,
-- "Duplicate review of recurring sources"): `first-run` reviews rows the dataset already holds only
-- until one import of the source completed there, `always` on every run (the behaviour before this
-- column), `never` not at all. Existing schedules and scrapers take the new default, so their
-- unchanged feeds stop waiting for a review at every run.

alter table scheduled_ingests
  add column review_duplicates text not null default 'first-run'
    check (review_duplicates in ('first-run', 'always', 'never'));

alter table scrapers
  add column review_duplicates text not null default 'first-run'
    check (review_duplicates in ('first-run', 'always', 'never'));
