-- Applies Collector moves of one rollout atomically (collector-store.ts builds the arguments from
-- the transition table of collector-state.ts). Each move is a compare-and-set on the record's
-- state; in the same step it keeps the counts per state, the in-flight slot and the indexes
-- (queued, retries, reconciling) true to the new state, so that no crash can leave a slot held
-- by a Collector that does not hold one by its state.
--
-- The moves of one call are of one organization's Collectors (collector-store.ts groups them).
--
-- KEYS: 1 results (HASH key -> JSON), 2 counts (HASH state -> n), 3 slots of the policy (SET of
--       "<rollout>#<key>"), 4 queued (ZSET), 5 retries (ZSET), 6 reconciling (ZSET),
--       7 rollout (HASH), 8 durations (LIST), 9 counts per wave (HASH "<wave>:<state>" -> n),
--       10 verifying (ZSET), 11 counts per cohort (HASH "<cohort>|<state>" -> n),
--       12 counts per organization (HASH "<org>|<state>" -> n), 13 slots of the policy in this
--       organization (SET of "<rollout>#<key>"), 14 durations per kind (HASH kind -> JSON list of
--       the latest durations in ms, newest last: what predicts an upgrade's length; "@<cohort>" ->
--       the cohort's durations per build of distance), 15 outcomes (HASH "<org>|<outcome>" -> times
--       reached, "<org>|verdict:<verdict>" -> n, "<org>|reopened:<state>" -> moves out of a
--       settled state: never decreased, the tally of fleet_upgrade_results_total)
-- ARGV: rollout id, slot limit, slot limit of the organization (0 none), the organization,
--       channel to publish a freed slot on ('' none), number of counters k, then k pairs (rollout
--       field, increment), then a duration in ms ('' none), then a rollout field that counts the
--       moves written ('' none: e.g. `knownIssueSkipped`), then 13 values per move: the
--       Collector's key (its id, or "<org>/<id>"), expected state ('' = the record must not exist), new state, JSON,
--       slot ('take' | 'free' | 'keep'), old index, new index ('' | 'q' | 'r' | 'c' | 'v'), new score
--       ('' with index 'q': the next place in the admission order; 'p<base>': the base (an upgrade's
--       expected length in whole seconds, negated: the longest first) plus the next place as a
--       fraction; 'c': a canary's, before every other, counted in the rollout's `canaries`; 'u':
--       below the policy's minimumBuild, before the canaries even, counted in `belowMinimum`; 'k':
--       the score it has in that index (a move that stays queued keeps its place)), the
--       record's wave ('' none), its cohort ('' none), the outcome it reaches ('' none: the new
--       state when the move settles the Collector, from collector-state.ts's table), the health
--       events' verdict of it ('' none), the settled state it leaves ('' none).
-- Returns one number per move: 1 written, 0 the stored state was not the expected one,
-- -1 no in-flight slot was free.
local index = { q = KEYS[4], r = KEYS[5], c = KEYS[6], v = KEYS[10] }
local rollout = ARGV[1]
local limit = tonumber(ARGV[2])
local orgLimit = tonumber(ARGV[3])
local org = ARGV[4]
local channel = ARGV[5]
local k = tonumber(ARGV[6])
local i = 7
for _ = 1, k do
  redis.call('HINCRBY', KEYS[7], ARGV[i], tonumber(ARGV[i + 1]))
  i = i + 2
end
local duration = ARGV[i]
local countField = ARGV[i + 1]
i = i + 2
local out = {}
local freed = 0
local written = 0
local durationKind = false
local durationCohort = false
while i + 12 <= #ARGV do
  local id, expected, newState, json = ARGV[i], ARGV[i + 1], ARGV[i + 2], ARGV[i + 3]
  local slot, oldIndex, newIndex, score = ARGV[i + 4], ARGV[i + 5], ARGV[i + 6], ARGV[i + 7]
  local newWave, newCohort = ARGV[i + 8], ARGV[i + 9]
  local outcome, verdict, reopened = ARGV[i + 10], ARGV[i + 11], ARGV[i + 12]
  i = i + 13
  local old = redis.call('HGET', KEYS[1], id)
  local oldState = false
  local oldWave, oldCohort = '', ''
  if old then
    local decoded = cjson.decode(old)
    oldState = decoded['state']
    if type(decoded['wave']) == 'number' then oldWave = tostring(decoded['wave']) end
    if type(decoded['cohort']) == 'string' then oldCohort = decoded['cohort'] end
  end
  local ok = 1
  if expected == '' then
    if old then ok = 0 end
  elseif oldState ~= expected then
    ok = 0
  end
  local member = rollout .. '#' .. id
  if ok == 1 and slot == 'take' and redis.call('SISMEMBER', KEYS[3], member) == 0 then
    if redis.call('SCARD', KEYS[3]) >= limit then
      ok = -1
    elseif orgLimit > 0 and redis.call('SCARD', KEYS[13]) >= orgLimit then
      ok = -1
    else
      redis.call('SADD', KEYS[3], member)
      redis.call('SADD', KEYS[13], member)
    end
  end
  if ok == 1 then
    if slot == 'free' and redis.call('SREM', KEYS[3], member) == 1 then freed = freed + 1 end
    if slot == 'free' then redis.call('SREM', KEYS[13], member) end
    redis.call('HSET', KEYS[1], id, json)
    if oldState ~= newState then
      if oldState then
        redis.call('HINCRBY', KEYS[2], oldState, -1)
        redis.call('HINCRBY', KEYS[12], org .. '|' .. oldState, -1)
      end
      redis.call('HINCRBY', KEYS[2], newState, 1)
      redis.call('HINCRBY', KEYS[12], org .. '|' .. newState, 1)
    end
    if oldState ~= newState or oldWave ~= newWave then
      if oldState and oldWave ~= '' then redis.call('HINCRBY', KEYS[9], oldWave .. ':' .. oldState, -1) end
      if newWave ~= '' then redis.call('HINCRBY', KEYS[9], newWave .. ':' .. newState, 1) end
    end
    if oldState ~= newState or oldCohort ~= newCohort then
      if oldState and oldCohort ~= '' then redis.call('HINCRBY', KEYS[11], oldCohort .. '|' .. oldState, -1) end
      if newCohort ~= '' then redis.call('HINCRBY', KEYS[11], newCohort .. '|' .. newState, 1) end
    end
    if oldIndex ~= '' and oldIndex ~= newIndex then redis.call('ZREM', index[oldIndex], id) end
    if newIndex ~= '' then
      if score == 'k' then score = redis.call('ZSCORE', index[newIndex], id) or '' end
      if score == '' then score = redis.call('HINCRBY', KEYS[7], 'queueSeq', 1) end
      -- The bands -1e12 and -2e12 are collector-store.ts's QUEUE_SCORE_BANDS (a test checks).
      if score == 'c' then score = redis.call('HINCRBY', KEYS[7], 'canaries', 1) - 1e12 end
      if score == 'u' then score = redis.call('HINCRBY', KEYS[7], 'belowMinimum', 1) - 2e12 end
      if string.sub(score, 1, 1) == 'p' then
        -- Expected length first (the base: whole seconds, negated), then the order of discovery.
        score = tonumber(string.sub(score, 2)) + redis.call('HINCRBY', KEYS[7], 'queueSeq', 1) * 1e-7
      end
      redis.call('ZADD', index[newIndex], score, id)
    end
    -- The tally of outcomes, in the step that writes them: no process's death can lose one.
    if oldState ~= newState then
      if outcome ~= '' then redis.call('HINCRBY', KEYS[15], org .. '|' .. outcome, 1) end
      if verdict ~= '' then redis.call('HINCRBY', KEYS[15], org .. '|verdict:' .. verdict, 1) end
      if reopened ~= '' then redis.call('HINCRBY', KEYS[15], org .. '|reopened:' .. reopened, 1) end
    end
    written = written + 1
    if duration ~= '' then
      local record = cjson.decode(json)
      if type(record['kind']) == 'string' then durationKind = record['kind'] end
      if type(record['cohort']) == 'string' then durationCohort = record['cohort'] end
    end
  end
  table.insert(out, ok)
end
if written > 0 and duration ~= '' then
  redis.call('LPUSH', KEYS[8], duration)
  redis.call('LTRIM', KEYS[8], 0, 499)
  local function remember(field, ms)
    local raw = redis.call('HGET', KEYS[14], field)
    local list = {}
    if raw then list = cjson.decode(raw) end
    table.insert(list, ms)
    while #list > 100 do table.remove(list, 1) end
    redis.call('HSET', KEYS[14], field, cjson.encode(list))
  end
  if durationKind then
    remember(durationKind, tonumber(duration))
    -- A cohort's durations per build of distance ("@<cohort>"): its factor for kinds not seen yet.
    if durationCohort then
      local distance = tonumber(string.match(durationKind, '|(%d+)$')) or 1
      remember('@' .. durationCohort, math.floor(tonumber(duration) / math.max(1, distance)))
    end
  end
end
if written > 0 and countField ~= '' then redis.call('HINCRBY', KEYS[7], countField, written) end
if freed > 0 and channel ~= '' then redis.call('PUBLISH', channel, rollout) end
return out
