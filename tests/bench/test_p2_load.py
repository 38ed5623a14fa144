"""The load generators of P2 (bench/p2_http.py) against a real HTTP server on loopback: the open
loop offers the rate asked for whatever the server does (wrk with bench/wrk/paced.lua, and the
Python fallback), every issue carries its own Idempotency-Key, and P2's targets are read as ratios
of the run's own figures (absolute times vary two-fold between runs on a shared machine). Counts and
spacing are asserted, never timings of our code."""

from __future__ import annotations

import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from bench import p2_http

RATE = 40.0
SECONDS = 2


class Recorder(BaseHTTPRequestHandler):
    """Answers 201 to anything after a short pause, keeping the connection (HTTP/1.1), and
    records when each request arrived and its Idempotency-Key."""

    protocol_version = "HTTP/1.1"
    pause = 0.005

    def do_POST(self):
        length = int(self.headers.get("Content-Length") or 0)
        self.rfile.read(length)
        self.server.arrivals.append((time.monotonic(), self.headers.get("Idempotency-Key")))
        time.sleep(self.pause)
        body = b'{"ok": true}'
        self.send_response(201)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture
def server():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Recorder)
    httpd.arrivals = []
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield httpd
    httpd.shutdown()
    httpd.server_close()


LINES = [("POST", "/api/v1/ctrs/", f'{{"n": {n}}}') for n in range(50)]


@pytest.fixture(params=["wrk", "python"])
def generator(request, monkeypatch):
    if request.param == "python":
        monkeypatch.setattr(p2_http, "have_wrk", lambda: False)
    else:
        assert p2_http.have_wrk(), (
            "wrk não instalado: make test instala (scripts/system-packages.sh)"
        )
    return request.param


def ahead_of_schedule(times: list[float], rate: float) -> list[int]:
    """The arrivals (their indexes) that came before the schedule allows: by the time of the
    n-th, at most `rate` per second since the first, plus a quarter second's share and the 4
    first requests wrk sends at once (one per connection). A generator starved of CPU by a busy
    machine sends its late requests when it runs again, a burst that catches up and never gets
    ahead (a quarter second held 21 where 20 was the limit once, the suite's workers busy);
    sending ahead is what pacing forbids."""
    if not times:
        return []
    allowed_on_top = rate * 0.25 + 4
    return [n for n, t in enumerate(times) if n + 1 > rate * (t - times[0]) + allowed_on_top]


def test_a_burst_ahead_of_the_schedule_is_seen_and_a_late_one_that_catches_up_is_not():
    paced = [n / RATE for n in range(80)]
    # Starved for half a second, then the late requests at once: still behind the schedule.
    caught_up = [t if t < 0.5 else max(t, 1.0) for t in paced]
    # Two seconds' worth in the first half second.
    front_loaded = [n / (4 * RATE) for n in range(80)]
    assert ahead_of_schedule(paced, RATE) == []
    assert ahead_of_schedule(caught_up, RATE) == []
    assert ahead_of_schedule(front_loaded, RATE)


def test_the_open_loop_offers_the_rate_asked_for(server, generator):
    load = p2_http.run_load(
        server.server_port, LINES, {}, SECONDS, clients=4, rate=RATE, idempotent=True
    )
    expected = RATE * SECONDS
    assert abs(len(server.arrivals) - expected) <= 0.15 * expected + 4
    assert load.errors == 0 and load.rate == RATE
    # Paced, not in bursts: never ahead of the schedule.
    assert not ahead_of_schedule(sorted(t for t, _ in server.arrivals), RATE)
    keys = [key for _, key in server.arrivals]
    assert None not in keys and len(set(keys)) == len(keys)


def test_the_closed_loop_gives_each_request_its_key_only_when_asked(server, generator):
    p2_http.run_load(server.server_port, LINES, {}, 1, clients=2)
    assert server.arrivals and all(key is None for _, key in server.arrivals)
    server.arrivals.clear()
    p2_http.run_load(server.server_port, LINES, {}, 1, clients=2, idempotent=True)
    keys = [key for _, key in server.arrivals]
    assert keys and None not in keys and len(set(keys)) == len(keys)


def load(rps: float, p99: float, errors: int = 0) -> p2_http.Load:
    return p2_http.Load("wrk", int(rps * 10), 10.0, errors, p99 / 2, p99, p99, 0.001, p99)


def test_the_targets_are_ratios_of_the_runs_own_figures():
    extra = {
        "base": load(2000, 0.010),
        "base_alone": load(500, 0.004),
        "alone": load(60, 0.020),  # 5 × the lone baseline: within 6 ×
        "issue": load(150, 0.120),  # 7.5 % of the baseline's throughput: within 7 %
        "open": load(75, 0.070),  # 3.5 × the lone client: beyond 3 ×
    }
    (a, a_ratio, _, a_met), (_, b_ratio, _, b_met), (_, c_ratio, _, c_met) = p2_http.ratio_targets(
        extra
    )
    assert a.startswith("(a)")
    assert (round(a_ratio, 2), a_met) == (5.0, True)
    assert (round(b_ratio, 2), b_met) == (3.5, False)
    assert (round(c_ratio, 3), c_met) == (0.075, True)
    extra["open"] = load(75, 0.050, errors=1)  # within 3 ×, but an error
    assert p2_http.ratio_targets(extra)[1][3] is False


def test_the_issue_27_targets_are_the_lone_p50_and_the_closed_share_of_the_run():
    extra = {
        "base": load(2000, 0.010),
        "base_alone": load(500, 0.004),  # p50 2 ms
        "alone": load(60, 0.030),  # p50 15 ms: 7.5 × the lone baseline's, within 8 ×
        "issue": load(150, 0.120),  # 7.5 % of the baseline's throughput: below 10 %
        "open": load(75, 0.070),
    }
    (d, d_ratio, _, d_met), (e, e_ratio, _, e_met) = p2_http.issue27_targets(extra)
    assert d.startswith("(d)") and e.startswith("(e)")
    assert (round(d_ratio, 2), d_met) == (7.5, True)
    assert (round(e_ratio, 3), e_met) == (0.075, False)
    extra["alone"] = load(60, 0.034)  # p50 17 ms: 8.5 ×
    assert p2_http.issue27_targets(extra)[0][3] is False
