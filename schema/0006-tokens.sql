-- bisectd schema, version 6: API tokens (docs/API.md, "Authentication").
--
-- A token is shown once, when it is made; the store keeps its keyed hash
-- (HMAC-SHA256 with the server's secret, hex), never the token. prefix is
-- the token's public part, which names it in lists and finds its row.
-- role admin, submit or agent; an agent token bound to an agent's name
-- (agent) acts only as that agent, one with no name only enrols one.

CREATE TABLE tokens (
	id        INTEGER PRIMARY KEY,
	prefix    TEXT NOT NULL UNIQUE,
	hash      TEXT NOT NULL,
	role      TEXT NOT NULL CHECK (role IN ('admin', 'submit', 'agent')),
	agent     TEXT,               -- the agent's name it is bound to; NULL: none
	note      TEXT,
	created   INTEGER NOT NULL,
	last_used INTEGER,            -- NULL: never
	revoked   INTEGER             -- when; NULL: live
);
CREATE INDEX tokens_agent ON tokens(agent);
