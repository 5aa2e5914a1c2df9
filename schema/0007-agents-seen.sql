-- bisectd schema, version 7: when each agent last asked for work, and
-- when it was retired.
--
-- last_claim: the last time the agent long-polled for a task (unix time,
-- NULL: never). The engine sizes a step by the agents of the pool that
-- claimed recently or hold a task, not by those that only heartbeat.
-- retired: set when the agent was not seen for agent_retire_seconds
-- (NULL: active); its next call clears it.

ALTER TABLE agents ADD COLUMN last_claim INTEGER;
ALTER TABLE agents ADD COLUMN retired INTEGER;
