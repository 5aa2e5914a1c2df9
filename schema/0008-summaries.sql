-- bisectd schema, version 8: a commit's summary keeps the running sums it
-- is made of, so that an upload adds its runs to it instead of reading
-- every run of the commit again (stats_acc in lib/stats.h). Rows from
-- before have NULL sums: the first upload to such a commit rebuilds them
-- from its samples, which stay the truth.
ALTER TABLE summaries ADD COLUMN acc_sum REAL;
ALTER TABLE summaries ADD COLUMN acc_sum_inv REAL;
ALTER TABLE summaries ADD COLUMN acc_mean REAL;
ALTER TABLE summaries ADD COLUMN acc_m2 REAL;
ALTER TABLE summaries ADD COLUMN acc_min REAL;
ALTER TABLE summaries ADD COLUMN acc_max REAL;
