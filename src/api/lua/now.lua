-- (included) `now`: the Redis server's clock in ms, so that hosts with skewed clocks still agree.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
