"""Code blocks: normalise a fence's info string to a language, classify untagged code, detect unclosed fences."""
from __future__ import annotations

import re
from collections.abc import Iterable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from bot.core.reports.records import CodeBlock

LANG_BY_TAG = {
    **dict.fromkeys(("bend", "hvm", "hvm2", "hvm3", "hvm4", "hvml", "bend2"), "language"),
    **dict.fromkeys(("c", "h", "c99", "c11", "gnu c"), "c"),
    **dict.fromkeys(("cuda", "cu"), "cuda"),
    **dict.fromkeys(("metal", "msl"), "metal"),
}
LANGUAGE_TAGS = tuple(tag for tag, lang in LANG_BY_TAG.items() if lang == "language")
# A tag a repository may declare as its language (`[run] fence`): one lower-case word, as a fence's info string
# is read (`tag_of_info` lower-cases it), and never one of the C, CUDA or Metal tags.
FENCE_TAG = re.compile(r"[a-z][a-z0-9_+-]{0,31}")
RESERVED_TAGS = tuple(tag for tag, lang in LANG_BY_TAG.items() if lang != "language")
# Tags of what a report shows beside its programs (commands, output, a diff): never a runtime's language.
_OTHER_TEXT = frozenset({"text", "txt", "plaintext", "console", "shell", "sh", "bash", "diff", "output", "json",
                         "yaml", "toml", "markdown", "md", "log"})

_PANDOC_CLASS = re.compile(r"\{\s*\.?([^\s.{}=]+)")  # `{.c}`, `{.bend .numberLines}`, `{c}`
_FIRST_WORD = re.compile(r"[^\s{,]+")
_GNU_C = re.compile(r"gnu\s+c(?![\w+])")

# Content signatures for untagged blocks, checked in order: the more specific dialects first.
_CONTENT_SIGNATURES = (
    ("metal", re.compile(r"#\s*include\s*<metal_stdlib>|\bkernel\s+void\b")),
    ("cuda", re.compile(r"__global__|\bcudaMalloc\b|<<<")),
    ("c", re.compile(r"^\s*#\s*include\b|\bint\s+main\s*\(", re.MULTILINE)),
    ("language", re.compile(r"^\s*def\s+main\s*\(\s*\)\s*:", re.MULTILINE)),
)
_LANGUAGE_DEF = re.compile(r"^\s*def\s+\w+", re.MULTILINE)
_LANGUAGE_RETURN = re.compile(r"\breturn\b")


def tag_of_info(info: str) -> str:
    """The tag an author gave a fence: first word of the info string, lower case ("" when untagged)."""
    info = info.strip().lower()
    if not info:
        return ""
    if _GNU_C.match(info):
        return "gnu c"
    if info.startswith("{"):
        match = _PANDOC_CLASS.match(info)
        return match.group(1) if match else ""
    match = _FIRST_WORD.match(info)
    tag = match.group(0) if match else ""
    return tag.removeprefix("language-")


def classify_content(code: str) -> str:
    """A language guess for an untagged block from what the code looks like."""
    for lang, signature in _CONTENT_SIGNATURES:
        if signature.search(code):
            return lang
    if _LANGUAGE_DEF.search(code) and _LANGUAGE_RETURN.search(code):
        return "language"
    return "other"


def lang_of(tag: str, code: str, language_tags: tuple[str, ...] = ()) -> str:
    """The normalised language of a block: language|c|cuda|metal|other. `language_tags` are a repository's own
    tags for its language (`[run] fence`), which the configuration keeps clear of the C/CUDA/Metal ones."""
    if not tag:
        return classify_content(code)
    return "language" if tag in language_tags else LANG_BY_TAG.get(tag, "other")


def undeclared_tag(blocks: Iterable[CodeBlock]) -> str | None:
    """The first fence tag (of blocks with `.tag` and `.lang`) that may be a runtime's own language, not yet
    declared in `[run] fence`: a plain word read as no language, and no command, output or diff."""
    return next((b.tag for b in blocks if b.lang == "other" and FENCE_TAG.fullmatch(b.tag)
                 and b.tag not in RESERVED_TAGS and b.tag not in _OTHER_TEXT), None)


def fence_is_closed(markup: str, opening_index: int, end_index: int, lines: list[str]) -> bool:
    """True when the block's last line is a closing fence: same marker, at least as long as the opening."""
    if not markup or end_index - opening_index < 2 or end_index > len(lines):
        return False
    # Containers (blockquotes, list indentation) prefix the closing line; the fence itself is what is left.
    last = lines[end_index - 1].lstrip(" \t>").rstrip()
    return len(last) >= len(markup) and last == markup[0] * len(last)
