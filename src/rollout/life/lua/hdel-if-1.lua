-- Removes a field of a hash only when it still holds the value the caller read (a request carried
-- out is removed, a newer one written meanwhile is kept).
-- KEYS: 1 the hash. ARGV: the field, the value expected. Returns 1 when removed, 0 otherwise.
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
return redis.call('HDEL', KEYS[1], ARGV[1])
