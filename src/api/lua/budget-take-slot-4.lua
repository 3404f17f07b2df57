-- Takes a request slot of the sliding window. KEYS: rate, aimd, urgent, first. ARGV: slots, window,
-- recovery, token, priority (REQUEST_PRIORITY: -1 a read that has waited too long, 0 a create,
-- more is less urgent). Returns 0 (slot taken) or the ms to wait.
-- `urgent` (ZSET token -> expiry) holds the creates of every process that wait for a slot: while
-- one does, a less urgent request takes no slot that frees (it waits a share of the window and
-- asks again), so that a create of a worker does not queue behind a listing pass of the scheduler
-- in another process. `first` holds, the same way, the reads that have waited too long
-- (agedPriority in request-budget.ts): while one waits, creates let it go first. A waiting entry
-- expires after two windows (a process that died).
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
-- The set of waiters this request belongs to (none for the least urgent ones).
local mine = nil
if priority < 0 then mine = KEYS[4] elseif priority == 0 then mine = KEYS[3] end
local function waiting(key)
  redis.call('ZREMRANGEBYSCORE', key, '-inf', now)
  return redis.call('ZCARD', key) > 0
end
-- A free slot goes to the most urgent waiter: everyone lets `first` go, all but creates `urgent`.
local yields = earliest <= now
  and ((priority >= 0 and waiting(KEYS[4])) or (priority > 0 and waiting(KEYS[3])))
if earliest > now or yields then
  if mine then
    redis.call('ZADD', mine, now + 2 * span, token)
    redis.call('PEXPIRE', mine, math.ceil(2 * span) + 1000)
  end
  if yields then return math.max(1, math.ceil(span / slots)) end
  return math.max(1, math.ceil(earliest - now))
end
if mine then redis.call('ZREM', mine, token) end
redis.call('ZADD', KEYS[1], now, token)
redis.call('ZREMRANGEBYRANK', KEYS[1], 0, -(2 * slots) - 1)
redis.call('PEXPIRE', KEYS[1], math.ceil(span) + 60000)
return 0
