"""Loopback servers for Sentry delivery faults that `tests/sinks/servers.py` does not cover:
a server that takes a request and never answers; and which finding each received request
carried."""

from __future__ import annotations

import socket
import threading
import time

from tests.sinks.servers import Received, decode_body, parse_envelope

POLL = 0.05  # how often the accept loop looks at the stop flag; not a test timing


class SilentServer:
    """Listens on 127.0.0.1, accepts each connection and reads its request, never answers.

    The connections stay open until the server is closed, so a client waits for its own
    timeout. `requests` holds what arrived, like `Receiver.requests`.
    """

    def __init__(self) -> None:
        self.requests: list[Received] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(POLL)
        self.port: int = self._listener.getsockname()[1]
        self._held: list[socket.socket] = []
        self._stop = threading.Event()
        self._arrived = threading.Condition()
        self._thread = threading.Thread(target=self._serve, daemon=True)

    def __enter__(self) -> SilentServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for conn in self._held:
            conn.close()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = self._listener.accept()
            except TimeoutError:
                continue
            self._held.append(conn)  # keeps it open (and unanswered) until __exit__
            received = _read_request(conn)
            if received is not None:
                with self._arrived:
                    self.requests.append(received)
                    self._arrived.notify_all()

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until `count` requests arrived (or timeout); return what arrived."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < count and time.monotonic() < deadline:
                self._arrived.wait(max(0.0, deadline - time.monotonic()))
            return list(self.requests)


def _read_request(conn: socket.socket) -> Received | None:
    """One HTTP/1.1 request with a Content-Length body, or None if the client gave up."""
    conn.settimeout(10.0)
    data = b""
    try:
        while b"\r\n\r\n" not in data:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            data += chunk
        head, _, body = data.partition(b"\r\n\r\n")
        request_line, *lines = head.decode("latin-1").split("\r\n")
        headers = dict(line.split(": ", 1) for line in lines if ": " in line)
        length = int(headers.get("Content-Length", "0"))
        while len(body) < length:
            chunk = conn.recv(65536)
            if not chunk:
                return None
            body += chunk
    except OSError:
        return None
    path = request_line.split(" ")[1]
    return Received(path, headers, body, time.monotonic())


def resources(requests: list[Received]) -> list[str]:
    """The `resource` tag of every event in `requests`, in arrival order: which finding each
    request (and so each scripted answer) belonged to."""
    out: list[str] = []
    for req in requests:
        _header, items = parse_envelope(decode_body(req))
        out.extend(p["tags"]["resource"] for head, p in items if head.get("type") == "event")
    return out
