"""What perfbot says in public is bounded and clean: secrets scrubbed, program output windowed, GitHub's limits kept.

    scrub(text, secrets)        every configured secret value replaced, wherever it appears
    fit(text, limit, note)      text cut at a line to fit `limit` characters, an open code fence closed, `note` added
    window(output)              the part of a program's output a comment or page may show
    Outgoing(secrets)           scrub then fit: what every adapter that posts or stores applies last
"""
from __future__ import annotations

from dataclasses import dataclass

GITHUB_TEXT_LIMIT = 65_536  # characters in an issue or PR body, a comment, a check run's summary
REDACTED = "[secret redacted by perfbot]"
WINDOW_LINES, WINDOW_CHARS = 40, 4_000


def scrub(text: str, secrets: tuple[str, ...]) -> str:
    """`secrets` longest first, so a secret that contains another is replaced whole."""
    for secret in secrets:
        if secret and secret in text:
            text = text.replace(secret, REDACTED)
    return text


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
    """The last step before a text leaves perfbot: `secrets` are the configured secret values (Settings)."""

    secrets: tuple[str, ...] = ()
    limit: int = GITHUB_TEXT_LIMIT

    def __call__(self, text: str, note: str = "") -> str:
        return fit(scrub(text, self.secrets), self.limit, note)


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
