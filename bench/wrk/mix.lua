-- The distinct mix for wrk: request paths read from a file (bench/mix.ts writes it from the
-- dataset's facts, all different), asked in order from a starting line, so a run meets no search
-- twice (and no response-cache hit) until it has asked the whole list. Our server and the Fastify
-- peer walk the same file; pgbench draws rows of the same list from PostgreSQL.
-- Arguments (after --): paths-file phase, phase = measure | warmup | check. The phases start at
-- different thirds of the list so a warm-up does not pre-answer what the measured run asks;
-- "check" prints the first 20 paths as "CHECK <path>" so the caller can verify them.

local paths = {}
local next_index = 1
local check = false
local asked = 0

function init(args)
  local file = io.open(args[1] or "", "r")
  if not file then
    error("usage: -- paths-file measure|warmup|check (cannot open " .. tostring(args[1]) .. ")")
  end
  for line in file:lines() do
    if #line > 0 then
      paths[#paths + 1] = line
    end
  end
  file:close()
  if #paths == 0 then
    error("no paths in " .. args[1])
  end
  local phase = args[2] or "measure"
  if phase == "warmup" then
    next_index = math.floor(#paths * 2 / 3) + 1
  elseif phase == "check" then
    next_index = math.floor(#paths / 3) + 1
    check = true
  elseif phase ~= "measure" then
    error("phase must be measure, warmup or check (got " .. phase .. ")")
  end
end

function request()
  -- wrk calls request() once in its main Lua state, where init() never runs, to check the
  -- script produces a valid request; any valid request will do there.
  if #paths == 0 then
    return wrk.format("GET", "/v1/events")
  end
  local path = paths[next_index]
  next_index = next_index % #paths + 1
  asked = asked + 1
  if check and asked <= 20 then
    io.write("CHECK ", path, "\n")
    io.flush()
  end
  return wrk.format("GET", path)
end
