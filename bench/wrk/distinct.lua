-- Scenario "distinct": a different search on every request, so the response cache cannot answer
-- and every request reaches a DuckDB worker. bench/postgis/distinct.sql draws the same parameters
-- from the same distributions for PostgreSQL/PostGIS.
-- Arguments (after --): lat_lo lat_hi lng_lo lng_hi categories(comma-separated) seed [check]
-- "check" prints the first 20 generated paths as "CHECK <path>" so the caller can verify them.

local lat_lo, lat_hi, lng_lo, lng_hi
local cats = {}
local check = false
local generated = 0

function init(args)
  lat_lo, lat_hi = tonumber(args[1]), tonumber(args[2])
  lng_lo, lng_hi = tonumber(args[3]), tonumber(args[4])
  for c in string.gmatch(args[5] or "", "[^,]+") do
    cats[#cats + 1] = c
  end
  if not lat_lo or not lat_hi or not lng_lo or not lng_hi or #cats == 0 then
    error("usage: -- lat_lo lat_hi lng_lo lng_hi categories seed [check]")
  end
  math.randomseed(tonumber(args[6]) or os.time())
  check = args[7] == "check"
end

function request()
  -- wrk calls request() once in its main Lua state, where init() never runs, to check the
  -- script produces a valid request; any valid request will do there.
  if not lat_lo then
    return wrk.format("GET", "/v1/events")
  end
  -- Micro-degree integers, like the pgbench script's random(): 6 decimals, uniform over the box.
  local lat = math.random(math.floor(lat_lo * 1e6), math.ceil(lat_hi * 1e6)) / 1e6
  local lng = math.random(math.floor(lng_lo * 1e6), math.ceil(lng_hi * 1e6)) / 1e6
  local radius = math.random(2, 15)
  local age_min = math.random(0, 12)
  local age_max = math.min(18, age_min + math.random(0, 6))
  local cat = cats[math.random(#cats)]
  local offset = math.random(0, 40)
  local path = string.format("/v1/events?lat=%.6f&lng=%.6f&radius_km=%d&age_min=%d&age_max=%d&category=%s&offset=%d",
    lat, lng, radius, age_min, age_max, cat, offset)
  generated = generated + 1
  if check and generated <= 20 then
    io.write("CHECK ", path, "\n")
    io.flush()
  end
  return wrk.format("GET", path)
end
