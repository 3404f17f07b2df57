-- Removes a consumer from a group only if it holds no pending entry (DELCONSUMER would drop them).
-- KEYS: the outbox stream. ARGV: group, consumer. Returns 1 when removed.
if #redis.call('XPENDING', KEYS[1], ARGV[1], '-', '+', 1, ARGV[2]) > 0 then return 0 end
redis.call('XGROUP', 'DELCONSUMER', KEYS[1], ARGV[1], ARGV[2])
return 1
