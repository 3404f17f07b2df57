-- Sets fields of a hash only when one of its fields still holds the value the caller read: a
-- compare-and-set between the scheduler and operator commands (phase changes, wave progress).
-- KEYS: 1 the hash. ARGV: the field compared, the value expected ('' = absent), then field/value
-- pairs to set. Returns 1 when written, 0 when the field held another value.
local current = redis.call('HGET', KEYS[1], ARGV[1])
if current == false then current = '' end
if current ~= ARGV[2] then return 0 end
if #ARGV > 2 then redis.call('HSET', KEYS[1], unpack(ARGV, 3)) end
return 1
