"""What perfbot says in public is bounded and clean: secrets scrubbed, program output windowed, GitHub's limits kept.

    Scrub(secrets)              every secret replaced, whole, reversed, in base64 or in part (12 characters on)
    scrub(text, secrets)        the same, once
    fit(text, limit, note)      text cut at a line to fit `limit` characters, an open code fence closed, `note` added
    window(output)              the part of a program's output a comment or page may show
    Outgoing(secrets)           scrub then fit: what every adapter that posts or stores applies last

The secrets are one list (bot.config.Settings.secret_values): the log redactor and the posting wall both scrub
with it, so a form one catches the other catches too.
"""
from __future__ import annotations

import base64
import re
from dataclasses import dataclass, field
from functools import cached_property, lru_cache

GITHUB_TEXT_LIMIT = 65_536  # characters in an issue or PR body, a comment, a check run's summary
REDACTED = "[secret redacted by perfbot]"
WINDOW_LINES, WINDOW_CHARS = 40, 4_000
# A piece of a secret this long is caught anywhere: shorter pieces would blank ordinary words, and 12 characters
# of a token leave too little to guess the rest from.
PARTIAL = 12


def _encodings(secret: str) -> set[str]:
    """The secret as base64 shows it inside a longer encoded text, at each of the three byte alignments: the
    characters that depend on the neighbouring bytes are left out, so the piece matches wherever it sits."""
    data, found = secret.encode(), set()
    for offset in range(3):
        encoded = base64.b64encode(b"\0" * offset + data + b"\0\0").decode()
        start = -(-offset * 4 // 3) + (1 if offset else 0)
        end = (offset + len(data)) * 4 // 3
        piece = encoded[start:end]
        found |= {piece, piece.replace("+", "-").replace("/", "_")}
    return {piece for piece in found if len(piece) >= PARTIAL}


class Scrub:
    """Replaces every configured secret: whole, reversed, base64-encoded, or any piece of PARTIAL characters."""

    def __init__(self, secrets: tuple[str, ...] | list[str] = (), mask: str = REDACTED) -> None:
        self.mask = mask
        forms: set[str] = set()
        for secret in secrets:
            if secret:
                forms |= {secret, secret[::-1]} | (_encodings(secret) if len(secret) >= 8 else set())
        whole = sorted(forms, key=len, reverse=True)  # a secret that contains another is replaced whole
        self._whole = re.compile("|".join(map(re.escape, whole))) if whole else None
        self._pieces = {form[i:i + PARTIAL] for form in forms if len(form) >= PARTIAL
                        for i in range(len(form) - PARTIAL + 1)}
        self._grams = {piece[:_GRAM] for piece in self._pieces} | {piece[-_GRAM:] for piece in self._pieces}

    def __call__(self, text: str) -> str:
        if self._whole is not None:
            text = self._whole.sub(self.mask, text)
        spans: list[list[int]] = []
        for start in sorted(self._piece_starts(text)):
            if spans and start <= spans[-1][1]:
                spans[-1][1] = start + PARTIAL
            else:
                spans.append([start, start + PARTIAL])
        for start, end in reversed(spans):
            text = text[:start] + self.mask + text[end:]
        return text

    def _piece_starts(self, text: str) -> set[int]:
        """Where a PARTIAL-long piece of a secret starts. Every such piece holds a _GRAM-long run that starts at a
        multiple of _STRIDE, so only those are looked up (a program's output may be megabytes), and the pieces
        around a hit checked."""
        found: set[int] = set()
        if not self._pieces:
            return found
        last = len(text) - PARTIAL
        for gram in range(0, len(text) - _GRAM + 1, _STRIDE):
            if text[gram:gram + _GRAM] in self._grams:
                found.update(start for start in range(max(0, gram - (PARTIAL - _GRAM)), min(gram, last) + 1)
                             if text[start:start + PARTIAL] in self._pieces)
        return found


_GRAM = 6
_STRIDE = PARTIAL - _GRAM + 1  # a PARTIAL-long piece always holds a whole gram starting at a multiple of this


@lru_cache(maxsize=8)
def _scrub_for(secrets: tuple[str, ...]) -> Scrub:
    return Scrub(secrets)


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    return _scrub_for(tuple(secrets))(text) if secrets else text


def fit(text: str, limit: int = GITHUB_TEXT_LIMIT, note: str = "") -> str:
    """`text` whole when it fits; else its first lines, a closing fence if a code block was open, and `note`."""
    if len(text) <= limit:
        return text
    note = note or "the rest was cut to fit GitHub's limit"
    tail = f"\n\n> **Cut by perfbot:** {note}\n"
    room = max(limit - len(tail) - 8, 0)
    head = text[:room]
    if "\n" in head:
        head = head[:head.rindex("\n")]
    if _open_fence(head):
        head += "\n" + _open_fence(head)
    return head + tail


def window(output: str, lines: int = WINDOW_LINES, chars: int = WINDOW_CHARS) -> str:
    """The first `lines` lines and `chars` characters of a program's output, saying how much was left out."""
    kept = "\n".join(output.splitlines()[:lines])[:chars]
    if len(kept) >= len(output.rstrip("\n")):
        return output
    return f"{kept}\n… ({len(output) - len(kept):,} more characters not shown)"


@dataclass(frozen=True)
class Outgoing:
    """The last step before a text leaves perfbot: `secrets` are the configured secret values (Settings);
    `folders` maps an absolute folder of the bot host to the name a message shows (the instance folder)."""

    secrets: tuple[str, ...] = ()
    limit: int = GITHUB_TEXT_LIMIT
    folders: tuple[tuple[str, str], ...] = field(default=())

    @cached_property
    def _scrub(self) -> Scrub:
        return Scrub(self.secrets)

    def __call__(self, text: str, note: str = "") -> str:
        for folder, name in sorted(self.folders, key=lambda pair: len(pair[0]), reverse=True):
            text = text.replace(folder, name)
        return fit(self._scrub(text), self.limit, note)


def _open_fence(text: str) -> str:
    """The fence that closes a code block still open at the end of `text`, or ""."""
    fence = ""
    for line in text.splitlines():
        stripped = line.lstrip()
        marker = stripped[:3]
        if marker in ("```", "~~~"):
            run = len(stripped) - len(stripped.lstrip(marker[0]))
            if not fence:
                fence = marker[0] * run
            elif stripped.startswith(fence) and not stripped.strip(marker[0]):
                fence = ""
    return fence
