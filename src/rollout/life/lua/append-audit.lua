-- (included) Appends one audit record to the audit stream (audit-log.ts), bounded two ways: at
-- most `cap` records (the oldest dropped) and none older than `keepMs` by Redis's own clock (the
-- stream ids are its time). What each bound dropped is counted in the `dropped` hash (`cap`,
-- `retention`), so that a reader knows the trail was cut, and where. No-op when `json` is ''.
local function appendAudit(stream, dropped, json, cap, keepMs)
  if json == '' then return end
  local before = redis.call('XLEN', stream)
  redis.call('XADD', stream, 'MAXLEN', tonumber(cap), '*', 'r', json)
  local afterCap = redis.call('XLEN', stream)
  if before + 1 > afterCap then redis.call('HINCRBY', dropped, 'cap', before + 1 - afterCap) end
  local t = redis.call('TIME')
  local oldest = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000) - tonumber(keepMs)
  if oldest > 0 then
    local expired = redis.call('XTRIM', stream, 'MINID', oldest)
    if expired > 0 then redis.call('HINCRBY', dropped, 'retention', expired) end
  end
end
