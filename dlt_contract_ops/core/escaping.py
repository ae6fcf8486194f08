r"""Text as a terminal shows it: every character that is not printable becomes a visible escape.

A column, table or source name comes from a warehouse or a file someone else wrote. Printed
raw, an ESC (`\x1b[2J`) clears or recolours the screen, a BEL rings, a bidi override
(U+202E) shows `exe.txt` as `txt.exe`, and a line break forges a line of output. Every place
that prints a name or free text for people (the text renderer, the logging sink, the `acks`
listing, `profile`) passes it through `visible`; JSON output keeps the raw text, since JSON
escapes what it must and a machine reads it.
"""

from __future__ import annotations

#: the short escapes people know; every other unprintable character is `\uXXXX`/`\UXXXXXXXX`
_SHORT = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def visible(text: str) -> str:
    r"""`text` with every unprintable character written as an escape: C0 and C1 controls,
    DEL, bidi and other format characters (U+202E, U+2066, U+200B, U+FEFF), line and
    paragraph separators. `\n`, `\r`, `\t` keep their short form; the rest is `\u` + four hex
    digits (JSON's form), or `\U` + eight above U+FFFF. Printable text, non-ASCII letters
    included, is left alone; the result is printable, so escaping it again changes nothing.

    >>> visible("größe\x1b[31m\a\u202e\n")
    'größe\\u001b[31m\\u0007\\u202e\\n'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else _escape(c) for c in text)


def _escape(char: str) -> str:
    code = ord(char)
    return _SHORT.get(char) or (f"\\u{code:04x}" if code <= 0xFFFF else f"\\U{code:08x}")
