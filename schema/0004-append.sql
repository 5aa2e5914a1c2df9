-- bisectd schema, version 4: a job's kernel command line variant
-- ("mitigations=off"), appended to its workload's for every boot.

ALTER TABLE jobs ADD COLUMN append TEXT;
