-- Adds a member to a set only while the rollout exists (rollout-store.ts `follow`): a rollout
-- forgotten meanwhile (forget-rollout-22.lua) is not written back into the set.
-- KEYS: 1 the rollout (HASH), 2 the set. ARGV: the member. Returns 1 when added, 0 otherwise.
if redis.call('HEXISTS', KEYS[1], 'startedAt') == 0 then return 0 end
return redis.call('SADD', KEYS[2], ARGV[1])
