-- chronomap:no-transaction
-- The rows that 0967 stopped writing, deleted (issue 37 §2; docs/scaling.md, "The count model that
-- does not outgrow the events"): the catalogs' level-10 month and year rows and the datasets' year
-- rows of event_cell_counts, and the catalogs' level-6 years of event_coarse_cell_counts. Nothing
-- reads them since 0966 (release v0.6) and nothing writes them since 0967, so they are only weight:
-- on 1M real-shaped events in 20 datasets about 1.7M of 3.8M rows of event_cell_counts.
--
-- One period at a time, each its own transaction (a cursor loop may commit), so that no lock or
-- snapshot is held for long while the writers go on: the periods are the totals' years and months
-- in event_counts, which every stored cell row's period is among. Deleting these rows changes no
-- derived row (0967's triggers derive nothing from them). Run again, it finds nothing to delete.
do $$
declare
  p timestamptz;
begin
  for p in select period from event_counts where grain = 'y' and dataset_id = 0 order by period loop
    delete from event_cell_counts where grain = 'y' and period = p and dataset_id <> 0;
    delete from event_coarse_cell_counts where grain = 'y' and period = p and dataset_id < 0;
    commit;
  end loop;
  for p in select period from event_counts where grain = 'm' and dataset_id = 0 order by period loop
    delete from event_cell_counts where grain = 'm' and period = p and dataset_id < 0;
    commit;
  end loop;
end $$;
