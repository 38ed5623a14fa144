"""A real HTTP receiver on loopback for the webhook tests: a threaded http.server that answers
from a script (a list of statuses, a delay, requests answered only together) and verifies every
signature it gets, as a receiver of ours should (docs/api.md)."""

from __future__ import annotations

import hashlib
import hmac
import http.server
import json
import threading
import time
from dataclasses import dataclass, field

REPLAY_WINDOW_SECONDS = 300


def verify(secret: str, header: str, body: bytes, now: float | None = None) -> bool:
    """The receiver's check: the HMAC of "<t>.<body>" with the secret, and t within the window."""
    parts = dict(item.split("=", 1) for item in header.split(","))
    timestamp = int(parts["t"])
    expected = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256)
    fresh = abs((now if now is not None else time.time()) - timestamp) <= REPLAY_WINDOW_SECONDS
    return fresh and hmac.compare_digest(expected.hexdigest(), parts["v1"])


@dataclass
class Received:
    headers: dict
    body: bytes
    signature_ok: bool  # the HMAC, whatever the time
    timestamp: int

    @property
    def json(self) -> dict:
        return json.loads(self.body)


@dataclass
class Receiver:
    """Answers `statuses` in turn (the last one repeats), after `delay` seconds each. With
    `together`, each request is answered only once that many are in at once (a barrier, no
    sleep): requests that never are, senders taking turns, get 500 after `together_timeout`."""

    statuses: list[int] = field(default_factory=lambda: [200])
    delay: float = 0.0
    together: int = 0
    together_timeout: float = 30.0
    secret: str = ""
    received: list[Received] = field(default_factory=list)

    def start(self) -> Receiver:
        receiver = self
        barrier = threading.Barrier(self.together) if self.together else None

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):  # noqa: N802 (http.server's name)
                length = int(self.headers.get("Content-Length", 0))
                body = self.rfile.read(length)
                header = self.headers.get("X-CTR-Signature", "t=0,v1=")
                timestamp = int(dict(i.split("=", 1) for i in header.split(","))["t"])
                # The worker is told its `now` in these tests: check the HMAC at that time.
                ok = verify(receiver.secret, header, body, now=timestamp)
                receiver.received.append(Received(dict(self.headers), body, ok, timestamp))
                status = receiver.statuses[min(len(receiver.received), len(receiver.statuses)) - 1]
                if receiver.delay:
                    time.sleep(receiver.delay)
                if barrier is not None:
                    try:
                        barrier.wait(receiver.together_timeout)
                    except threading.BrokenBarrierError:
                        status = 500
                try:
                    self.send_response(status)
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(f"resposta {status}".encode())
                except OSError:
                    pass  # the worker gave up waiting and closed the connection

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()
        return self

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/ctr-eventos"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
