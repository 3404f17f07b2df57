-- A 429: lowers the AIMD factor (once per window) and honours a Retry-After pause.
-- KEYS: aimd. ARGV: window, recovery, decrease, minFactor, retryAfterRealMs. Returns the factor (string).
--#include now
local aimdKey = KEYS[1]
local window = tonumber(ARGV[1])
local recovery = tonumber(ARGV[2])
local decrease = tonumber(ARGV[3])
local minFactor = tonumber(ARGV[4])
local retryAfter = tonumber(ARGV[5])
--#include factor
if retryAfter > 0 then
  redis.call('HSET', aimdKey, 'pausedUntil', math.max(pausedUntil, now + retryAfter))
end
if now - lastDecrease >= window / factor then
  factor = math.max(minFactor, factor * decrease)
  redis.call('HSET', aimdKey, 'factor', tostring(factor), 'at', now, 'lastDecrease', now)
end
redis.call('PEXPIRE', aimdKey, math.ceil(window / minFactor / recovery) + 60000)
return tostring(factor)
