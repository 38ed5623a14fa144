-- Open-loop load for the benchmarks (bench/p2_http.py): requests at a fixed arrival rate,
-- whatever the server's answers take, unlike cycle.lua's closed loop (each connection sends
-- its next request as soon as its last one is answered).
--   wrk -t2 -c8 -d30s --latency -s bench/wrk/paced.lua http://127.0.0.1:PORT
-- Env: as cycle.lua (BENCH_REQUESTS, BENCH_HEADERS, BENCH_IDEMPOTENCY_PREFIX), plus
-- BENCH_RATE = the arrival rate of all threads together, requests per second, and
-- BENCH_THREADS = wrk's -t (wrk starts each thread before it sets up the next, so a thread
-- cannot count the others itself).
--
-- Each thread keeps its own schedule (rate / threads, evenly spaced) and a connection that
-- is free waits, in delay(), for the next slot. When every connection is busy at a slot the
-- request goes out late: wrk measures latency from the send, so lateness would hide a slow
-- server (coordinated omission); it is counted and reported ("late", "late_max_us") so the
-- run says whether the rate was really offered. wrk sends each connection's first request
-- at once (no delay() before it): -c requests at the start, off schedule.

-- The shared part sits beside this script (wrk runs from any directory).
package.path = (debug.getinfo(1, "S").source:match("^@(.*/)") or "./") .. "?.lua;" .. package.path
local shared = require("bench_requests")
local ffi = require("ffi")
ffi.cdef [[
  typedef struct { long tv_sec; long tv_nsec; } bench_timespec;
  int clock_gettime(int clock_id, bench_timespec *tp);
]]
local CLOCK_MONOTONIC = 1
local now_ts = ffi.new("bench_timespec")

local function now_us()
  ffi.C.clock_gettime(CLOCK_MONOTONIC, now_ts)
  return tonumber(now_ts.tv_sec) * 1e6 + tonumber(now_ts.tv_nsec) / 1e3
end

local requests, headers = {}, {}
local counter = 0
local threads = {}
local interval_us = 0
local next_slot = nil
local nthreads = 1
late, late_max_us, sent = 0, 0, 0 -- globals: read by done() through thread:get

function setup(thread)
  thread:set("tid", #threads)
  table.insert(threads, thread)
end

function init(args)
  requests, headers = shared.load()
  counter = (tid or 0) * 7919
  local rate = tonumber(os.getenv("BENCH_RATE"))
  assert(rate and rate > 0, "BENCH_RATE: a taxa de chegada em requisições por segundo")
  nthreads = tonumber(os.getenv("BENCH_THREADS")) or 1
  interval_us = 1e6 * nthreads / rate
end

function delay()
  local t = now_us()
  if next_slot == nil then
    -- Threads start their schedules staggered across one interval.
    next_slot = t + interval_us * (tid or 0) / nthreads
  end
  local slot = next_slot
  next_slot = next_slot + interval_us
  local wait = slot - t
  if wait < -1000 then
    late = late + 1
    if -wait > late_max_us then late_max_us = -wait end
  end
  return math.max(0, wait / 1000)
end

function request()
  counter = counter + 1
  sent = sent + 1
  return shared.format(requests, headers, tid or 0, counter)
end

function done(summary, latency, requests_)
  local late_all, late_max, sent_all = 0, 0, 0
  for _, t in ipairs(threads) do
    late_all = late_all + (t:get("late") or 0)
    sent_all = sent_all + (t:get("sent") or 0)
    late_max = math.max(late_max, t:get("late_max_us") or 0)
  end
  shared.report(summary, latency, { { "late", late_all }, { "late_max_us", late_max },
    { "sent", sent_all } })
end
