-- bisectd schema, version 11: the runs of each end a job asks for before
-- it may end not-reproduced (submit --end-runs). 0: the engine's own.

ALTER TABLE jobs ADD COLUMN end_runs INTEGER NOT NULL DEFAULT 0;
