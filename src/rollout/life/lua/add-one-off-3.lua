-- Writes a one-off policy's record (operator/one-off-policies.ts `add`) and the audit record of the
-- operator's request that made it, in one step: a kill between the one-off and its record is
-- impossible, because there is no "between". The audit record is appended first: an audit stream
-- that cannot be written fails the step before the one-off is written (no action without its
-- record).
--
-- KEYS: 1 the one-off policies (HASH name -> record JSON), 2 the audit stream, 3 the audit's
--       dropped counters (HASH)
-- ARGV: the name, the record JSON, the audit record (JSON; '' none), its size cap, its retention (ms)
-- Returns 1.
--#include append-audit
appendAudit(KEYS[2], KEYS[3], ARGV[3], ARGV[4], ARGV[5])
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
