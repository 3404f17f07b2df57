-- Renews a consumer's hold on the outbox entries it is still delivering: each id it still owns
-- gets its idle time reset (XCLAIM JUSTID leaves the delivery count alone), so no other process
-- takes it for the entry of a dead consumer. Returns the ids it no longer owns.
-- KEYS: the outbox stream. ARGV: group, consumer, ids...
local lost = {}
for i = 3, #ARGV do
  local owned = redis.call('XPENDING', KEYS[1], ARGV[1], ARGV[i], ARGV[i], 1, ARGV[2])
  if #owned > 0 then
    redis.call('XCLAIM', KEYS[1], ARGV[1], ARGV[2], 0, ARGV[i], 'JUSTID')
  else
    lost[#lost + 1] = ARGV[i]
  end
end
return lost
