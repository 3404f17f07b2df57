-- Removes a one-off policy that never started (operator/control.ts: `abort` or `forget` of it):
-- only while its record is the one read and no rollout of it exists, so that a one-off the
-- scheduler starts meanwhile keeps its policy (and is aborted or forgotten as a rollout).
-- KEYS: 1 the one-off policies (HASH name -> record), 2 the policies (HASH policy -> current rollout)
-- ARGV: the one-off's name, its record as read.
-- Returns 1 when removed, 0 when it changed, is gone or started meanwhile.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
if redis.call('HEXISTS', KEYS[2], ARGV[1]) == 1 then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
