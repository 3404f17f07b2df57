-- Reads the AIMD factor. KEYS: aimd. ARGV: window, recovery. Returns the factor (string).
--#include now
local aimdKey = KEYS[1]
local window = tonumber(ARGV[1])
local recovery = tonumber(ARGV[2])
--#include factor
return tostring(factor)
