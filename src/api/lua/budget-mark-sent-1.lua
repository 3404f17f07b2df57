-- Moves a token's slot to now (never earlier). KEYS: rate. ARGV: token. Returns 1.
--#include now
local old = redis.call('ZSCORE', KEYS[1], ARGV[1])
if old and tonumber(old) < now then redis.call('ZADD', KEYS[1], 'XX', now, ARGV[1]) end
return 1
