-- Renews the leader lock if this process still holds it. KEYS: the lock. ARGV: token, TTL ms.
-- Returns 1 when renewed, 0 when another process holds it (or none).
if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) else return 0 end
