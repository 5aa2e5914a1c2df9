-- bisectd schema, version 10: a job's kernel config variant, its own
-- options ("CONFIG_MITIGATION_RETPOLINE=n") as a JSON array of strings,
-- merged after its workload's fragments for every build. NULL: none.

ALTER TABLE jobs ADD COLUMN config TEXT;
