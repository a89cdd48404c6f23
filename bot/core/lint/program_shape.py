"""The shape of a program: which functions it defines and which recurse, in every syntax the reports use.

Bend's `def f(x):`, the `fn f(x)` style, HVM4's top-level `@f = λ{...}` / `@f(x) = ...` with `@f(...)`
references, and C (functions found by Pygments' C lexer). Recursion is a cycle in the call graph, so mutual
recursion (`is_even`/`is_odd`) counts, and Bend's `fold`/`bend` are recursion written as a construct.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

C_LIBRARY = frozenset({"main", "printf", "puts", "malloc", "free", "calloc", "realloc", "memcpy", "memset",
                       "strlen", "abort", "exit", "fprintf", "putchar", "assert", "atoi", "atol", "strtol",
                       "strtoul", "clock_gettime", "pthread_create", "pthread_join", "sizeof"})
_DEFINITION = re.compile(
    r"^(?P<indent>[ \t]*)(?:"
    r"(?:def|fn|func|function)\s+(?P<named>[A-Za-z_][\w./]*)\s*(?P<params>\([^)\n]*\))?"
    r"|@(?P<at>[A-Za-z_][\w./]*)\s*(?P<at_params>\([^)\n]*\))?\s*(?::[^=\n]*)?="
    r")", re.MULTILINE)
_C_NOISE = re.compile(r"//[^\n]*|/\*.*?\*/|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'|^[ \t]*#[^\n]*",
                      re.DOTALL | re.MULTILINE)
_C_TOKEN = re.compile(r"[{}]|\b([A-Za-z_]\w*)\s*\(")
_C_KEYWORDS = frozenset({"if", "while", "for", "switch", "return", "sizeof", "do", "else", "case", "defined",
                         "_Alignof", "alignof", "__attribute__", "typeof", "__typeof__"})
_COMMENT = re.compile(r"//[^\n]*|(?<![^\s])#(?=\s|$)[^\n]*")  # `# note`, but `#Nil` is an HVM constructor
_IMPLICIT_RECURSION = re.compile(r"^\s*(?:fold|bend)\s+[\w.]+(?:\s*=\s*[^:\n]+)?\s*(?:with\s+[^:\n]+)?:",
                                 re.MULTILINE)


@dataclass(frozen=True)
class Shape:
    """Functions a program defines, which of them recurse, and its zero-argument definitions (constants)."""

    functions: frozenset[str]
    recursive: frozenset[str]
    constants: frozenset[str] = frozenset()
    implicit_recursion: bool = False  # Bend's fold/bend: recursion with no call written

    @property
    def recurses(self) -> bool:
        return bool(self.recursive) or self.implicit_recursion


def canonical_name(name: str) -> str:
    """`@List/sum`, `List.sum` and `list_sum` are one function across the two programs."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def language_shape(code: str) -> Shape:
    code = _COMMENT.sub("", code)
    definitions = list(_DEFINITION.finditer(code))
    top = [m for m in definitions if len(m.group("indent").expandtabs()) == min(
        (len(d.group("indent").expandtabs()) for d in definitions), default=0)]
    calls: dict[str, set[str]] = {}
    constants: set[str] = set()
    names = [m.group("named") or m.group("at") for m in top]
    for index, match in enumerate(top):
        name = names[index]
        end = top[index + 1].start() if index + 1 < len(top) else len(code)
        body = code[match.end():end]
        params = match.group("params") or match.group("at_params")
        no_parameters = params is not None and params.strip("() \t") == ""
        if no_parameters or (match.group("at") and params is None and not _is_function_body(body)):
            constants.add(name)
        calls[name] = {other for other in names if _calls(body, other, bool(match.group("at")))}
    return _shape(names, calls, constants, bool(_IMPLICIT_RECURSION.search(code)))


def c_shape(code: str) -> Shape:
    """Functions of a C translation: a name, its parameter list and a body at file level; calls inside bodies.

    A scan over the code with comments, strings and preprocessor lines blanked, not a full lexer: the audit runs
    on every report of every sync, and this is what it needs to know.
    """
    text = _C_NOISE.sub(lambda m: " " * len(m.group(0)) if "\n" not in m.group(0) else "\n" * m.group(0).count("\n"),
                        code)
    names: list[str] = []
    constants: set[str] = set()
    calls: dict[str, set[str]] = {}
    current, depth = None, 0
    for match in _C_TOKEN.finditer(text):
        token = match.group(0)
        if token == "{":
            depth += 1
        elif token == "}":
            depth = max(0, depth - 1)
        elif match.group(1) not in _C_KEYWORDS:
            name = match.group(1)
            if depth == 0:
                close = _closing_paren(text, match.end() - 1)
                if close is not None and text[close + 1:].lstrip()[:1] == "{":
                    current = name
                    names.append(name)
                    calls.setdefault(name, set())
                    if text[match.end():close].strip() in ("", "void"):
                        constants.add(name)
            elif current is not None:
                calls[current].add(name)
    return _shape(names, calls, constants, False)


def _closing_paren(text: str, opening: int) -> int | None:
    depth = 0
    for index in range(opening, min(len(text), opening + 2000)):
        char = text[index]
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
            if depth == 0:
                return index
    return None


def _is_function_body(body: str) -> bool:
    return bool(re.match(r"\s*(?:λ|\\|#?\{|lambda\b)", body))


def _calls(body: str, name: str, at_style: bool) -> bool:
    if at_style:
        return re.search(rf"@{re.escape(name)}(?![\w./])", body) is not None
    return re.search(rf"(?<![\w.@/]){re.escape(name)}\s*\(", body) is not None


def _shape(names: list[str], calls: dict[str, set[str]], constants: set[str], implicit: bool) -> Shape:
    functions = frozenset(n for n in names if n not in C_LIBRARY)
    recursive = frozenset(n for n in functions if _reaches(n, n, calls))
    return Shape(functions, recursive, frozenset(constants) & functions, implicit)


def _reaches(start: str, goal: str, calls: dict[str, set[str]]) -> bool:
    """Whether `start` calls `goal` through any chain of calls: a cycle through goal is recursion."""
    seen: set[str] = set()
    frontier = list(calls.get(start, ()))
    while frontier:
        name = frontier.pop()
        if name == goal:
            return True
        if name not in seen:
            seen.add(name)
            frontier.extend(calls.get(name, ()))
    return False
