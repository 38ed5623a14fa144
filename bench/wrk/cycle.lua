-- wrk script of the benchmarks (bench/p2_http.py, bench/p3_nearest.py):
--   wrk -t2 -c16 -d30s --latency -s bench/wrk/cycle.lua http://127.0.0.1:PORT
-- Env: BENCH_REQUESTS = a file of requests, one per line: "METHOD<TAB>PATH<TAB>BODY" (BODY may be
-- empty); BENCH_HEADERS = "Name: value" lines separated by "\n" sent on every request.
-- Each thread cycles through the requests from its own offset. At the end, one line
-- "BENCH-JSON {...}" with the latency percentiles (µs), the counts and the errors.

local requests = {}
local headers = {}
local counter = 0
local threads = {}

local function load()
  local file = assert(io.open(os.getenv("BENCH_REQUESTS"), "r"))
  for line in file:lines() do
    local method, path, body = line:match("^([^\t]+)\t([^\t]+)\t?(.*)$")
    if method then
      table.insert(requests, { method = method, path = path, body = body ~= "" and body or nil })
    end
  end
  file:close()
  for line in (os.getenv("BENCH_HEADERS") or ""):gmatch("[^\n]+") do
    local name, value = line:match("^([^:]+):%s*(.*)$")
    if name then headers[name] = value end
  end
end

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  load()
  counter = (tid or 0) * 7919
end

function request()
  counter = counter + 1
  local r = requests[(counter % #requests) + 1]
  local h = {}
  for k, v in pairs(headers) do h[k] = v end
  if r.body then h["Content-Type"] = "application/json" end
  return wrk.format(r.method, r.path, h, r.body)
end

function done(summary, latency, requests_)
  local e = summary.errors
  io.write(string.format(
    'BENCH-JSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, '
      .. '"write": %d, "status": %d, "timeout": %d, "p50": %d, "p95": %d, "p99": %d, '
      .. '"min": %d, "max": %d, "mean": %.1f}\n',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    latency.min, latency.max, latency.mean))
end
