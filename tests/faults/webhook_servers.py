"""Loopback servers for webhook delivery faults that `tests/sinks/servers.py` does not cover:
a receiver that takes the POST and never answers, and one that answers a byte at a time."""

from __future__ import annotations

import socket
import threading
import time

from tests.sinks.servers import Received

POLL = 0.05  # how often the accept loop looks at the stop flag; not a test timing


def read_request(conn: socket.socket) -> Received:
    """One HTTP request off `conn`: head up to the blank line, then `Content-Length` bytes."""
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            break
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    request_line, *lines = head.decode("latin-1").split("\r\n")
    headers = dict(line.split(": ", 1) for line in lines if ": " in line)
    length = int(headers.get("Content-Length", "0"))
    while len(body) < length:
        chunk = conn.recv(65536)
        if not chunk:
            break
        body += chunk
    return Received(request_line.split(" ")[1], headers, body, time.monotonic())


class SlowServer:
    """Listens on 127.0.0.1; per connection reads one request, sends `head` at once, then
    `trickle` one byte every `interval` seconds (never, when `interval` is None).

    `SlowServer()` takes the POST and never answers; `SlowServer(head=b"HTTP/1.1 200 OK\\r\\n"
    b"Content-Length: 100\\r\\n\\r\\n", trickle=b"x" * 100)` answers 2xx but trickles the body.
    Every connection stays open until the server is closed. `requests` holds what arrived.
    """

    def __init__(
        self, head: bytes = b"", trickle: bytes = b"", interval: float | None = None
    ) -> None:
        self.head = head
        self.trickle = trickle
        self.interval = interval
        self.requests: list[Received] = []
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(POLL)
        self.port: int = self._listener.getsockname()[1]
        self._stop = threading.Event()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> SlowServer:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()
        for thread in self._threads:
            thread.join()
        self._listener.close()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _addr = self._listener.accept()
            except TimeoutError:
                continue
            thread = threading.Thread(target=self._answer, args=(conn,), daemon=True)
            self._threads.append(thread)
            thread.start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            received = read_request(conn)
            with self._lock:
                self.requests.append(received)
            try:
                conn.sendall(self.head)
                for byte in self.trickle:
                    if self.interval is None or self._stop.wait(self.interval):
                        break
                    conn.sendall(bytes([byte]))
            except OSError:
                pass  # the client cut the connection: what these servers are for
            self._stop.wait()  # hold the connection open (and unanswered) until closed
