-- Takes a request slot of the sliding window. KEYS: rate, aimd, urgent. ARGV: slots, window,
-- recovery, token, priority (REQUEST_PRIORITY: 0 a create, more is less urgent). Returns 0 (slot
-- taken) or the ms to wait.
-- `urgent` (ZSET token -> expiry) holds the creates of every process that wait for a slot: while
-- one does, a less urgent request takes no slot that frees (it waits a share of the window and
-- asks again), so that a create of a worker does not queue behind a listing pass of the scheduler
-- in another process. A waiting create's entry expires after two windows (a process that died).
--#include now
local aimdKey = KEYS[2]
local slots = tonumber(ARGV[1])
local window = tonumber(ARGV[2])
local recovery = tonumber(ARGV[3])
local token = ARGV[4]
local priority = tonumber(ARGV[5]) or 2
--#include factor
local span = window / factor
local earliest = math.max(now, pausedUntil)
local nth = redis.call('ZREVRANGE', KEYS[1], slots - 1, slots - 1, 'WITHSCORES')
if nth[2] then earliest = math.max(earliest, tonumber(nth[2]) + span) end
if earliest > now then
  if priority == 0 then
    redis.call('ZADD', KEYS[3], now + 2 * span, token)
    redis.call('PEXPIRE', KEYS[3], math.ceil(2 * span) + 1000)
  end
  return math.max(1, math.ceil(earliest - now))
end
if priority > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[3], '-inf', now)
  if redis.call('ZCARD', KEYS[3]) > 0 then return math.max(1, math.ceil(span / slots)) end
else
  redis.call('ZREM', KEYS[3], token)
end
redis.call('ZADD', KEYS[1], now, token)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(2 * slots) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(span) + 60000)
return 0
