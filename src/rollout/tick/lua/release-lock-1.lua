-- Releases the leader lock if this process still holds it. KEYS: the lock. ARGV: token.
-- Returns 1 when released, 0 when another process holds it (or none).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) else return 0 end
