-- (included) The current AIMD factor from the hash `aimdKey`; needs `now`, `window`, `recovery`.
local s = redis.call('HMGET', aimdKey, 'factor', 'at', 'pausedUntil', 'lastDecrease')
local factor = 1
if s[1] then factor = math.min(1, tonumber(s[1]) + recovery * math.max(0, now - tonumber(s[2])) / window) end
local pausedUntil = tonumber(s[3] or 0)
local lastDecrease = tonumber(s[4] or -1e15)
