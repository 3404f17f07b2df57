-- Rewrites a one-off policy's record (one-off-policies.ts) only while it is still there: a
-- one-off removed meanwhile (`abort`/`forget` of it, or `forget` of its rollout) is not written
-- back, so it never starts again.
-- KEYS: 1 the one-off policies (HASH name -> record JSON). ARGV: the name, the new record JSON.
-- Returns 1 when written, 0 when the one-off is gone.
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
return 1
