"""The test suite's loopback HTTP servers, in one place: a scripted receiver for webhooks and
Sentry envelopes (`Receiver`), a server that takes a request and never answers
or answers a byte at a time (`SlowServer`), and the helpers that read
what they received (Sentry envelopes, events, the DSN). Each listens on 127.0.0.1 on a port of
its own and records every request; `PagedApi` serves JSON pages for a dlt REST source."""

from __future__ import annotations

import functools
import gzip
import json
import re
import socket
import threading
import time
import zlib
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any


@dataclass
class Received:
    """One request as the server saw it."""

    path: str
    headers: dict[str, str]
    body: bytes
    at: float

    def json(self) -> Any:
        return json.loads(self.body)


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b"{}"


class Receiver:
    """A ThreadingHTTPServer on 127.0.0.1 with a free port.

    `replies` is consumed one per request; when it runs out, `default` answers.
    """

    def __init__(self, replies: list[Reply] | None = None, default: Reply | None = None) -> None:
        self.replies = list(replies or [])
        self.default = default or Reply()
        self.requests: list[Received] = []
        self._lock = threading.Lock()
        self._arrived = threading.Condition(self._lock)
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with receiver._lock:
                    receiver.requests.append(
                        Received(self.path, dict(self.headers.items()), body, time.monotonic())
                    )
                    reply = receiver.replies.pop(0) if receiver.replies else receiver.default
                    receiver._arrived.notify_all()
                self.send_response(reply.status)
                for key, value in reply.headers.items():
                    self.send_header(key, value)
                self.send_header("Content-Length", str(len(reply.body)))
                self.end_headers()
                self.wfile.write(reply.body)

            def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> Receiver:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until `count` requests arrived (or timeout); return what arrived."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < count and time.monotonic() < deadline:
                self._arrived.wait(max(0.0, deadline - time.monotonic()))
            return list(self.requests)


class PagedApi:
    """A REST API for a dlt REST source to read: JSON pages served (GET) from `folder`, each
    `{"data": [...], "next": <url of the next page or null>}` as dlt's `JSONLinkPaginator`
    reads it; `publish` replaces what the next request reads."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        folder.mkdir()
        handler = functools.partial(_QuietHandler, directory=str(folder))
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self._thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()

    def publish(self, endpoint: str, rows: list[dict[str, Any]], page_size: int = 20) -> None:
        for stale in self.folder.glob(f"{endpoint}-*.json"):
            stale.unlink()
        chunks = [rows[i:i + page_size] for i in range(0, len(rows), page_size)] or [[]]
        for n, chunk in enumerate(chunks, start=1):
            following = f"{self.url}/{endpoint}-{n + 1}.json" if n < len(chunks) else None
            page = {"data": chunk, "next": following}
            (self.folder / f"{endpoint}-{n}.json").write_text(json.dumps(page))


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:  # keep test output quiet
        pass


def free_port() -> int:
    """A port nothing listens on (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port: int = s.getsockname()[1]
    return port


# -- Sentry envelopes ----------------------------------------------------------------------


def decode_body(req: Received) -> bytes:
    encoding = req.headers.get("Content-Encoding", "").lower()
    if encoding == "gzip":
        return gzip.decompress(req.body)
    if encoding == "deflate":
        return zlib.decompress(req.body)
    if encoding == "br":
        import brotli  # type: ignore[import-not-found]

        return bytes(brotli.decompress(req.body))
    return req.body


def parse_envelope(raw: bytes) -> tuple[dict[str, Any], list[tuple[dict[str, Any], Any]]]:
    """(envelope header, [(item header, item payload)]) of a Sentry envelope.

    The wire format: a JSON header line, then per item a JSON header line and a payload whose
    length is the header's `length` or runs to the next newline.
    """
    header_line, _, rest = raw.partition(b"\n")
    header = json.loads(header_line)
    items: list[tuple[dict[str, Any], Any]] = []
    while rest.strip():
        item_line, _, rest = rest.partition(b"\n")
        item_header = json.loads(item_line)
        length = item_header.get("length")
        if length is None:
            payload, _, rest = rest.partition(b"\n")
        else:
            payload, rest = rest[:length], rest[length:]
            rest = rest[1:] if rest.startswith(b"\n") else rest
        content: Any = payload
        if item_header.get("type") in ("event", "transaction", "client_report"):
            content = json.loads(payload)
        items.append((item_header, content))
    return header, items


def events(receiver: Receiver) -> Iterator[dict[str, Any]]:
    """Every event payload the Sentry receiver got, in arrival order."""
    for req in receiver.requests:
        _header, items = parse_envelope(decode_body(req))
        for item_header, payload in items:
            if item_header.get("type") == "event":
                yield payload


def dsn(receiver_or_port: Receiver | int, project: int = 42) -> str:
    port = receiver_or_port.port if isinstance(receiver_or_port, Receiver) else receiver_or_port
    return f"http://publickey@127.0.0.1:{port}/{project}"


POLL = 0.05  # how often an accept loop looks at the stop flag; not a test timing


class SlowServer:
    """Listens on 127.0.0.1; per connection reads one request, sends `head` at once, then
    `trickle` one byte every `interval` seconds (never, when `interval` is None).

    `SlowServer()` takes the POST and never answers, so a client waits for its own timeout;
    `SlowServer(head=b"HTTP/1.1 200 OK\\r\\nContent-Length: 100\\r\\n\\r\\n",
    trickle=b"x" * 100)` answers 2xx but trickles the body.
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
        self._arrived = threading.Condition()
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
            if received is None:
                return
            with self._arrived:
                self.requests.append(received)
                self._arrived.notify_all()
            try:
                conn.sendall(self.head)
                for byte in self.trickle:
                    if self.interval is None or self._stop.wait(self.interval):
                        break
                    conn.sendall(bytes([byte]))
            except OSError:
                pass  # the client cut the connection: what these servers are for
            self._stop.wait()  # hold the connection open (and unanswered) until closed

    def wait_for(self, count: int, timeout: float = 10.0) -> list[Received]:
        """Block until `count` requests arrived (or timeout); return what arrived."""
        deadline = time.monotonic() + timeout
        with self._arrived:
            while len(self.requests) < count and time.monotonic() < deadline:
                self._arrived.wait(max(0.0, deadline - time.monotonic()))
            return list(self.requests)


def read_request(conn: socket.socket) -> Received | None:
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


@dataclass(frozen=True)
class S3Server:
    """moto's S3 in server mode on 127.0.0.1, signatures checked: `key`/`secret` are an IAM
    user's that may do anything on S3; any other key is refused (`InvalidAccessKeyId`)."""

    endpoint: str
    key: str
    secret: str
    pid: int
    #: the server's request log (one werkzeug line a request: method, path, status)
    log: Path

    def requests(self, method: str, bucket: str) -> int:
        """How many `method` requests (`HEAD`, `GET`, ...) on `bucket`'s objects the server
        answered so far."""
        return sum(self.requests_by_object(method, bucket).values())

    def requests_by_object(self, method: str, bucket: str) -> Counter[str]:
        """`method` requests on `bucket`'s objects so far, by object key (query left off)."""
        marker = re.compile(rf'"{method} /{re.escape(bucket.removeprefix("s3://"))}/([^ ?]*)')
        plain = re.sub(r"\x1b\[[0-9;]*m", "", self.log.read_text())  # werkzeug's colours
        return Counter(m.group(1) for m in map(marker.search, plain.splitlines()) if m)

    def client(self) -> Any:
        import boto3

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=self.key,
                            aws_secret_access_key=self.secret, region_name="us-east-1")

    def filesystem(self) -> Any:
        """An `s3fs` filesystem of this user on the server (listings not cached)."""
        import s3fs

        return s3fs.S3FileSystem(key=self.key, secret=self.secret, use_listings_cache=False,
                                 client_kwargs={"endpoint_url": self.endpoint,
                                                "region_name": "us-east-1"})

    def secrets(self, section: str = "destination.filesystem", *, key: str | None = None
                ) -> str:
        """`[<section>.credentials]` for `.dlt/secrets.toml` (this user's, or `key`'s)."""
        return (f"[{section}.credentials]\naws_access_key_id = {json.dumps(key or self.key)}\n"
                f"aws_secret_access_key = {json.dumps(self.secret)}\n"
                f"endpoint_url = {json.dumps(self.endpoint)}\nregion_name = \"us-east-1\"\n")


def start_s3_server(log: Path) -> tuple[Any, S3Server]:
    """A moto S3 server subprocess on a free port, with one IAM user made while the server
    still answers unsigned requests (its first three), logging its requests to `log`; stop
    it with `stop_process`."""
    import os
    import subprocess
    import sys

    import boto3

    port = free_port()
    env = {**os.environ, "INITIAL_NO_AUTH_ACTION_COUNT": "3"}
    with log.open("ab") as sink:  # the child keeps its own descriptor
        proc = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
            env=env, stdout=subprocess.DEVNULL, stderr=sink,
        )
    endpoint = f"http://127.0.0.1:{port}"
    for _ in range(300):  # bounded: the server answers within seconds
        if proc.poll() is not None:
            raise RuntimeError(f"moto server exited with {proc.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            time.sleep(0.1)
    iam = boto3.client("iam", endpoint_url=endpoint, aws_access_key_id="bootstrap",
                       aws_secret_access_key="bootstrap", region_name="us-east-1")
    iam.create_user(UserName="loader")
    iam.put_user_policy(UserName="loader", PolicyName="s3", PolicyDocument=json.dumps({
        "Version": "2012-10-17",
        "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}))
    key = iam.create_access_key(UserName="loader")["AccessKey"]
    return proc, S3Server(endpoint, key["AccessKeyId"], key["SecretAccessKey"], proc.pid, log)


def stop_process(proc: Any) -> None:
    """Stop a server subprocess this suite started, by its PID."""
    import os
    import signal

    if proc.poll() is None:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(timeout=10)
        except Exception:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
