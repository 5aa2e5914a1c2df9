-- bisectd schema, version 12: each agent's level at an engine step, so a
-- running job's commits can be shown at one agent's level as its report
-- shows them at the end. JSON: [{"id", "level_pct", "reference"}], NULL
-- with fewer than two agents (or from a bisectd before this version).

ALTER TABLE decisions ADD COLUMN agents TEXT;
