-- bisectd schema, version 14: the runs each end of a job may be measured
-- to before the ends are undecided, where a resume raised it (bisectctl
-- resume of a job undecided at its ends). 0: the engine's own (30).

ALTER TABLE jobs ADD COLUMN ends_max INTEGER NOT NULL DEFAULT 0;
