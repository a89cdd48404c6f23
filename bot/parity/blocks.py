"""Finding the Metal and CUDA blocks of a source file: lexed by Pygments' C++ lexer, marked by comments,
`#if`/`#elif` arms or function-name prefixes, each block one top-level declaration or definition."""
from __future__ import annotations

import bisect
import re
from dataclasses import dataclass

from pygments.lexers import CppLexer
from pygments.token import Comment, Keyword, Name, Operator, Punctuation, Text

from bot.core.config import ParityConfig

METAL, CUDA = "metal", "cuda"
_DIRECTIVE = re.compile(r"^\s*#\s*(if|ifdef|ifndef|elif|else|endif)\b(.*)$")
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class Token:
    kind: str  # name | keyword | punct | op | literal | attribute
    text: str
    line: int


@dataclass(frozen=True)
class RawBlock:
    backend: str  # metal | cuda
    name: str
    line: int
    end_line: int
    tokens: tuple[Token, ...]


@dataclass(frozen=True)
class MarkProblem:
    line: int
    message: str


def find_blocks(text: str, config: ParityConfig) -> tuple[list[RawBlock], list[MarkProblem]]:
    code, comments = lex_code(text)
    if config.style == "markers":
        return _marked(code, comments, config)
    if config.style == "ifdef":
        return _arms(text, code, config), []
    return _prefixed(code, config), []


def lex_code(text: str) -> tuple[list[Token], list[Token]]:
    """Code tokens (no whitespace, comments or preprocessor lines) and comment tokens, each with its line."""
    starts = [i for i, ch in enumerate(text) if ch == "\n"]
    code, comments = [], []
    text = text if text.endswith("\n") else text + "\n"  # the lexer ends a // comment at its newline
    for index, ttype, value in CppLexer(stripnl=False).get_tokens_unprocessed(text):
        if ttype in Text or not value.strip():
            continue
        line = bisect.bisect_left(starts, index) + 1
        if ttype in Comment.Preproc or ttype in Comment.PreprocFile:
            continue
        if ttype in Comment:
            comments.append(Token("comment", value, line))
        elif ttype in Name.Attribute:
            code.append(Token("attribute", value, line))
        elif ttype in Keyword:
            code.append(Token("keyword", value, line))
        elif ttype in Name:
            code.append(Token("name", value, line))
        elif ttype in Punctuation:
            code.append(Token("punct", value, line))
        elif ttype in Operator:
            code.append(Token("op", value, line))
        else:
            code.append(Token("literal", value, line))
    return code, comments


def item_end(tokens: list[Token], start: int) -> int:
    """The index after the declaration or definition starting at `start`: its `;`, or the `}` closing its body."""
    depth, index = 0, start
    while index < len(tokens):
        token = tokens[index]
        if token.kind == "punct":
            for ch in token.text:
                depth += ch in "([{"
                depth -= ch in ")]}"
            if depth < 0:  # the enclosing scope closed: what came so far is all there is
                return index
            if depth == 0 and (token.text.endswith("}") or token.text == ";"):
                return index + 1
        index += 1
    return index


def item_name(tokens: tuple[Token, ...] | list[Token]) -> str | None:
    """A function's name (the identifier before its parameter list), else the last identifier before `{ = ;`."""
    last = None
    for token in tokens:
        if token.kind == "punct" and token.text.startswith("("):
            return last
        if token.text in ("{", "=", ";"):
            break
        if token.kind == "name":
            last = token.text
    return last


def _items(tokens: list[Token]) -> list[tuple[Token, ...]]:
    out, index = [], 0
    while index < len(tokens):
        end = max(item_end(tokens, index), index + 1)
        item = tuple(tokens[index:end])
        if not (len(item) == 1 and item[0].text in (";", "}")):
            out.append(item)
        index = end
    return out


def _block(backend: str, name: str, item: tuple[Token, ...]) -> RawBlock:
    return RawBlock(backend, name, item[0].line, item[-1].line, item)


def _marked(code: list[Token], comments: list[Token], config: ParityConfig) -> tuple[list[RawBlock], list[MarkProblem]]:
    metal, cuda = config.tags
    tags = {metal: METAL, cuda: CUDA}
    pattern = re.compile(r"^(?://+|/\*+)\s*(" + "|".join(re.escape(t) for t in tags) + r")(?![\w-])(.*?)(?:\*+/)?\s*$",
                         re.S)
    blocks, problems = [], []
    lines = [t.line for t in code]
    for comment in comments:
        found = pattern.match(comment.text.strip())
        if not found:
            continue
        tag, name = found.group(1), found.group(2).strip()
        if not _IDENT.fullmatch(name):
            problems.append(MarkProblem(comment.line, f"marker `{tag}` needs the block's name, e.g. `// {tag} "
                                        f"vector_add` (got {name[:40]!r})"))
            continue
        start = bisect.bisect_right(lines, comment.line)  # the first code after the marker's own line
        end = item_end(code, start) if start < len(code) else start
        if end <= start:
            problems.append(MarkProblem(comment.line, f"marker `{tag} {name}` is followed by no code: put it on "
                                        "the line before the block it names"))
            continue
        blocks.append(_block(tags[tag], name, tuple(code[start:end])))
    return blocks, problems


def _arms(text: str, code: list[Token], config: ParityConfig) -> list[RawBlock]:
    """Each top-level item inside an arm whose condition is the Metal (or CUDA) macro, named by its own name."""
    stack: list[list] = []  # per open #if: [backend of the current arm, first line of that arm]
    ranges: list[tuple[str, int, int]] = []
    for number, line in enumerate(text.splitlines(), 1):
        found = _DIRECTIVE.match(line)
        if not found:
            continue
        word, rest = found.group(1), found.group(2)
        if word in ("elif", "else", "endif") and stack:
            backend, first = stack.pop()
            if backend:
                ranges.append((backend, first, number))
        if word != "endif":
            stack.append([_arm_backend(word, rest, config), number])
    out = []
    for backend, first, last in ranges:
        inside = [t for t in code if first < t.line < last]
        for item in _items(inside):
            name = item_name(item)
            if name and item[0].text != "using":  # `using namespace metal;` belongs to one backend alone
                out.append(_block(backend, name, item))
    return out


def _arm_backend(word: str, condition: str, config: ParityConfig) -> str | None:
    condition = condition.split("//")[0].split("/*")[0]
    words = set(_IDENT.findall(condition))
    if word in ("else", "ifndef") or "!" in condition:
        return None  # "not Metal" may be the CPU: only an arm that names its backend is paired
    metal, cuda = config.tags
    hits = [backend for backend, macro in ((METAL, metal), (CUDA, cuda)) if macro in words]
    return hits[0] if len(hits) == 1 else None


def _prefixed(code: list[Token], config: ParityConfig) -> list[RawBlock]:
    out = []
    for item in _items(code):
        name = item_name(item)
        if not name or not any(t.text == "{" for t in item):
            continue  # a prototype is not a block: its definition is
        for backend, prefix in zip((METAL, CUDA), config.tags, strict=True):
            if name.startswith(prefix) and len(name) > len(prefix):
                out.append(_block(backend, name[len(prefix):], item))
    return out
