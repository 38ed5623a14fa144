-- What cycle.lua and paced.lua share: the requests and headers they read from the environment,
-- the request each one sends, and the BENCH-JSON line bench/p2_http.py parses.
-- Env: BENCH_REQUESTS = a file of requests, one per line: "METHOD<TAB>PATH<TAB>BODY" (BODY may be
-- empty); BENCH_HEADERS = "Name: value" lines separated by "\n" sent on every request;
-- BENCH_IDEMPOTENCY_PREFIX (optional): each request gets its own Idempotency-Key from it.

local M = {}

function M.load()
  local requests, headers = {}, {}
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
  return requests, headers
end

-- The `counter`-th request of thread `tid`, cycling through `requests`.
function M.format(requests, headers, tid, counter)
  local r = requests[(counter % #requests) + 1]
  local h = {}
  for k, v in pairs(headers) do h[k] = v end
  if r.body then h["Content-Type"] = "application/json" end
  local prefix = os.getenv("BENCH_IDEMPOTENCY_PREFIX")
  if prefix and prefix ~= "" then
    h["Idempotency-Key"] = string.format("%s-%d-%d", prefix, tid, counter)
  end
  return wrk.format(r.method, r.path, h, r.body)
end

-- One line "BENCH-JSON {...}": latency percentiles (µs), counts, errors, and `extra`
-- (name → integer) after them.
function M.report(summary, latency, extra)
  local e = summary.errors
  local line = string.format(
    'BENCH-JSON {"requests": %d, "duration_us": %d, "bytes": %d, "connect": %d, "read": %d, '
      .. '"write": %d, "status": %d, "timeout": %d, "p50": %d, "p95": %d, "p99": %d, '
      .. '"min": %d, "max": %d, "mean": %.1f',
    summary.requests, summary.duration, summary.bytes, e.connect, e.read, e.write, e.status,
    e.timeout, latency:percentile(50), latency:percentile(95), latency:percentile(99),
    latency.min, latency.max, latency.mean)
  for _, pair in ipairs(extra or {}) do
    line = line .. string.format(', "%s": %d', pair[1], pair[2])
  end
  io.write(line .. "}\n")
end

return M
