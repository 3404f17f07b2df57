-- Takes a request slot of the sliding window. KEYS: rate, aimd. ARGV: slots, window, recovery,
-- token. Returns 0 (slot taken) or the ms to wait.
--#include now
local aimdKey = KEYS[2]
local slots = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local recovery = tonumber(ARGV[3])
--#include factor
local span = window / factor
local earliest = math.max(now, pausedUntil)
local nth = redis.call('ZREVRANGE', KEYS[1], slots - 1, slots - 1, 'WITHSCORES')
if nth[2] then earliest = math.max(earliest, tonumber(nth[2]) + span) end
if earliest > now then return math.max(1, math.ceil(earliest - now)) end
redis.call('ZADD', KEYS[1], now, ARGV[4])
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(2 * slots) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(span) + 60000)
return 0
