-- wrk script of the benchmarks (bench/p2_http.py, bench/p3_nearest.py):
--   wrk -t2 -c16 -d30s --latency -s bench/wrk/cycle.lua http://127.0.0.1:PORT
-- Env: BENCH_REQUESTS, BENCH_HEADERS, BENCH_IDEMPOTENCY_PREFIX (bench_requests.lua).
-- Each thread cycles through the requests from its own offset. At the end, one line
-- "BENCH-JSON {...}" with the latency percentiles (µs), the counts and the errors.

-- The shared part sits beside this script (wrk runs from any directory).
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local shared = require("bench_requests")

local requests, headers = {}, {}
local counter = 0
local threads = {}

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  requests, headers = shared.load()
  counter = (tid or 0) * 7919
end

function request()
  counter = counter + 1
  return shared.format(requests, headers, tid or 0, counter)
end

function done(summary, latency, requests_)
  shared.report(summary, latency)
end
