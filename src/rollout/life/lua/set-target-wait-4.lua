-- Records why a policy's build waits to start (tick/choose-build.ts: `minAge`, `after`), or that
-- it waits no more, with the events that tell of it, in one atomic step: the wait in the hash of
-- waits, each event appended to the history of the rollout it is about (the policy × the build,
-- which may not have started yet) and added to the notification outbox. The history of a
-- rollout that has not started expires after `ttl` ms unless the rollout starts (its start
-- removes the expiry: rollout-store.ts), so that a build that never starts leaves nothing behind.
--
-- KEYS: 1 the waits (HASH policy -> JSON), 2 the rollout (HASH), 3 its history (LIST), 4 the outbox (STREAM)
-- ARGV: the policy, the wait's JSON ('' = it waits no more), history entries kept, outbox entries
--       kept, ttl in ms of a history without a rollout, then e and e (event id, event JSON) pairs.
-- Returns 1.
if ARGV[2] == '' then
  redis.call('HDEL', KEYS[1], ARGV[1])
else
  redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
end
local e = tonumber(ARGV[6])
local i = 7
for _ = 1, e do
  redis.call('RPUSH', KEYS[3], ARGV[i + 1])
  redis.call('LTRIM', KEYS[3], -tonumber(ARGV[3]), -1)
  redis.call('XADD', KEYS[4], 'MAXLEN', '~', ARGV[4], '*', 'id', ARGV[i], 'event', ARGV[i + 1])
  i = i + 2
end
if e > 0 and redis.call('HEXISTS', KEYS[2], 'startedAt') == 0 then
  redis.call('PEXPIRE', KEYS[3], tonumber(ARGV[5]))
end
return 1
