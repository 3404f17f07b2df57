-- Appends one audit record alone (audit-log.ts `append`): a refused request, a policy file change,
-- an action that writes no rollout. An action that writes a rollout records its audit record in
-- its own step instead (write-rollout-6.lua, forget-rollout-22.lua).
--
-- KEYS: 1 the audit stream, 2 the dropped counters (HASH)
-- ARGV: the record (JSON), the size cap, the retention (ms)
-- Returns 1.
--#include append-audit
appendAudit(KEYS[1], KEYS[2], ARGV[1], ARGV[2], ARGV[3])
return 1
