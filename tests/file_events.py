"""What happened to the files of a folder, as the kernel saw it (Linux inotify): how often a
file was opened, written and replaced. A test counts a product's reads and writes of its own
files from the outside, as an operator with `inotifywait` would, instead of wrapping the
product's functions.

>>> import tempfile
>>> folder = Path(tempfile.mkdtemp())
>>> with watch(folder) as seen:
...     _ = (folder / "a.json").write_text("{}")
...     _ = (folder / "a.json").read_text()
...     print(seen.opened("a.json"), seen.written("a.json"))
2 1
"""

from __future__ import annotations

import ctypes
import os
import struct
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# <sys/inotify.h>
_OPEN, _CLOSE_WRITE, _CLOSE_NOWRITE, _MOVED_TO = 0x20, 0x08, 0x10, 0x80
#: closes are watched too, though not counted: the kernel merges an event with the one
#: before it when both are alike and unread, so two opens in a row would count as one
_MASK = _OPEN | _CLOSE_WRITE | _CLOSE_NOWRITE | _MOVED_TO
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, len; then the name, NUL padded


class FileEvents:
    """Events on the entries of one folder (its direct children), by name, since `watch`."""

    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._events: Counter[tuple[int, str]] = Counter()

    def _drain(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 1 << 16)
            except BlockingIOError:
                return
            at = 0
            while at < len(data):
                _, mask, _, size = _EVENT.unpack_from(data, at)
                name = data[at + _EVENT.size: at + _EVENT.size + size].rstrip(b"\0")
                at += _EVENT.size + size
                for kind in (_OPEN, _CLOSE_WRITE, _MOVED_TO):
                    if mask & kind:
                        self._events[kind, os.fsdecode(name)] += 1

    def opened(self, name: str) -> int:
        """Times `name` was opened (to read or write; a failed open is no event)."""
        self._drain()
        return self._events[_OPEN, name]

    def written(self, name: str) -> int:
        """Times `name` got new content: closed after writing, or replaced by a rename."""
        self._drain()
        return self._events[_CLOSE_WRITE, name] + self._events[_MOVED_TO, name]

    def clear(self) -> None:
        self._drain()
        self._events.clear()


@contextmanager
def watch(folder: Path) -> Iterator[FileEvents]:
    """The events on `folder`'s entries while the block runs (read them inside it)."""
    libc = ctypes.CDLL(None, use_errno=True)
    fd = libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
    if fd < 0:
        raise OSError(ctypes.get_errno(), "inotify_init1")
    try:
        if libc.inotify_add_watch(fd, os.fsencode(folder), _MASK) < 0:
            raise OSError(ctypes.get_errno(), f"inotify_add_watch {folder}")
        yield FileEvents(fd)
    finally:
        os.close(fd)
