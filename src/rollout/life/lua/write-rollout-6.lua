-- Writes a rollout and records what happened to it, in one atomic step (rollout-store.ts
-- `write`): a compare-and-set on its phase or on its waves' progress, its fields set and cleared,
-- its counters increased, and each event appended to the rollout's history and added to the
-- notification outbox. So an event exists exactly when the change it tells of does: no crash can
-- leave a halt without its `rollout.halted`, and a rollout that is gone (forgotten) is not written
-- back as a stray hash, nor given a history, an outbox event or a rollback request of its own.
-- An operator's action brings its audit record (audit-log.ts), appended first, in the same step:
-- no action exists without its record (an audit stream that cannot be written fails the step
-- before anything else is written), and no record says `allowed` of an action that was refused.
--
-- KEYS: 1 the rollout (HASH), 2 its history (LIST), 3 the outbox (STREAM), 4 the rollback
--       requests (HASH rollout id -> request JSON), 5 the audit stream, 6 the audit's dropped
--       counters (HASH)
-- ARGV: compare ('' | 'phase' | 'waveSeq'), the value expected (a phase, or a wave seq as a
--       number; a missing wave has seq 0), a field that must be absent ('' none), history
--       entries kept, outbox entries kept, a rollback request of this rollout to file ('' none),
--       the rollout's id (its field in the requests), the audit record ('' none), its stream's
--       size cap, its retention (ms), then
--       n and n field/value pairs to set, m and m fields to clear, k and k field/increment pairs,
--       e and e (event id, event JSON) pairs.
-- Returns the rollout's fields after the write (HGETALL), or 0 when the rollout does not exist
-- or the compared value was not the one expected, or the field that must be absent is there
-- (nothing written).
--#include append-audit
if redis.call('HEXISTS', KEYS[1], 'startedAt') == 0 then return 0 end
local compare, expected = ARGV[1], ARGV[2]
if compare == 'phase' then
  local phase = redis.call('HGET', KEYS[1], 'phase')
  if phase ~= expected then return 0 end
elseif compare == 'waveSeq' then
  local raw = redis.call('HGET', KEYS[1], 'wave')
  local seq = 0
  if raw and raw ~= '' then
    local ok, wave = pcall(cjson.decode, raw)
    if ok and type(wave) == 'table' and type(wave['seq']) == 'number' then seq = wave['seq'] end
  end
  if seq ~= tonumber(expected) then return 0 end
end
if ARGV[3] ~= '' and redis.call('HEXISTS', KEYS[1], ARGV[3]) == 1 then return 0 end
appendAudit(KEYS[5], KEYS[6], ARGV[8], ARGV[9], ARGV[10])
local historyKept, outboxKept = tonumber(ARGV[4]), ARGV[5]
if ARGV[6] ~= '' then redis.call('HSET', KEYS[4], ARGV[7], ARGV[6]) end
local i = 11
local n = tonumber(ARGV[i])
i = i + 1
if n > 0 then
  redis.call('HSET', KEYS[1], unpack(ARGV, i, i + 2 * n - 1))
  i = i + 2 * n
end
local m = tonumber(ARGV[i])
i = i + 1
if m > 0 then
  redis.call('HDEL', KEYS[1], unpack(ARGV, i, i + m - 1))
  i = i + m
end
local k = tonumber(ARGV[i])
i = i + 1
for _ = 1, k do
  redis.call('HINCRBY', KEYS[1], ARGV[i], tonumber(ARGV[i + 1]))
  i = i + 2
end
local e = tonumber(ARGV[i])
i = i + 1
for _ = 1, e do
  redis.call('RPUSH', KEYS[2], ARGV[i + 1])
  redis.call('LTRIM', KEYS[2], -historyKept, -1)
  redis.call('XADD', KEYS[3], 'MAXLEN', '~', outboxKept, '*', 'id', ARGV[i], 'event', ARGV[i + 1])
  i = i + 2
end
return redis.call('HGETALL', KEYS[1])
