-- Forgets a rollout (operator/control.ts `forget`) in one atomic step: a compare-and-set on the
-- phase it was read in (and, for a paused rollout, on its pause reason), refused while any of its
-- Collectors holds a slot, then every key of the rollout deleted and every mention of it in the
-- shared keys removed. The rollout's own writes refuse a rollout that is gone (write-rollout-6.lua:
-- its fields, history, outbox and rollback requests; add-if-rollout-2.lua), and an operator's move
-- of a Collector is a compare-and-set on a record that is gone too, so no action that comes after
-- this step brings a key of it back. A rollback request not yet taken refuses it (unless forced):
-- forgetting would drop the request silently. The holds the rollout had (its quarantined cohorts)
-- (its `quarantined` field as stored) are kept under its id in the forgotten hash, so that a rollout started again under the same id
-- starts with them (rollout-store.ts `start`).
--
-- KEYS: 1 the rollout (HASH), 2 results, 3 counts, 4 counts per wave, 5 queued, 6 retries,
--       7 reconciling, 8 verifying, 9 counts per cohort, 10 counts per organization,
--       11 durations, 12 durations per kind, 13 history, 14 outcomes (the tally of
--       fleet_upgrade_results_total), 15 rollouts (ZSET), 16 followed (SET),
--       17 one-off policies (HASH), 18 policies (HASH policy -> current rollout),
--       19 rollback requests (HASH), 20 forgotten (HASH id -> JSON of its holds), 21 the audit
--       stream, 22 the audit's dropped counters (HASH)
-- ARGV: the rollout id, its policy, the phase expected, the pause reason expected ('' any),
--       '1' to forget even with a rollback request pending, the audit record of the operator's
--       `forget` ('' none: appended first, in this step, only when the rollout is forgotten),
--       its stream's size cap, its retention (ms), then the states that hold a slot.
-- Returns {'forgotten', n} (n: its Collectors), {'gone'}, {'changed', phase}, {'busy', n} or
-- {'pending'} (a rollback request not yet taken).
--#include append-audit
if redis.call('HEXISTS', KEYS[1], 'startedAt') == 0 then return { 'gone' } end
local phase = redis.call('HGET', KEYS[1], 'phase') or ''
if phase ~= ARGV[3] then return { 'changed', phase } end
if ARGV[4] ~= '' and redis.call('HGET', KEYS[1], 'pauseReason') ~= ARGV[4] then
  return { 'changed', phase }
end
local counts = redis.call('HGETALL', KEYS[3])
local busy, total = 0, 0
local slot = {}
for i = 9, #ARGV do slot[ARGV[i]] = true end
for i = 1, #counts, 2 do
  local n = tonumber(counts[i + 1]) or 0
  total = total + n
  if slot[counts[i]] then busy = busy + n end
end
if busy > 0 then return { 'busy', busy } end
if ARGV[5] ~= '1' and redis.call('HEXISTS', KEYS[19], ARGV[1]) == 1 then return { 'pending' } end
appendAudit(KEYS[21], KEYS[22], ARGV[6], ARGV[7], ARGV[8])
local holds = redis.call('HGET', KEYS[1], 'quarantined')
redis.call('DEL', unpack(KEYS, 1, 14))
redis.call('ZREM', KEYS[15], ARGV[1])
redis.call('SREM', KEYS[16], ARGV[1])
redis.call('HDEL', KEYS[17], ARGV[2])
if redis.call('HGET', KEYS[18], ARGV[2]) == ARGV[1] then redis.call('HDEL', KEYS[18], ARGV[2]) end
redis.call('HDEL', KEYS[19], ARGV[1])
if holds and holds ~= '' and holds ~= '[]' then redis.call('HSET', KEYS[20], ARGV[1], holds) end
return { 'forgotten', total }
