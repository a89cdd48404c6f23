"""The parity guard: every Metal block has one CUDA twin in its file and the other way round, twins have the
same shape (calls, branches, loops and mapped names, in order and nesting), and a change touches both twins."""
from __future__ import annotations

import hashlib
from dataclasses import dataclass

from bot.core.config import ParityConfig
from bot.parity.blocks import CUDA, METAL, RawBlock, Token, find_blocks, lex_code

BRANCHES = {"if", "else", "switch", "case", "default"}
LOOPS = {"for", "while", "do"}
JUMPS = {"return", "break", "continue", "goto"}
SIDE = {METAL: "Metal", CUDA: "CUDA"}


@dataclass(frozen=True)
class Event:
    kind: str  # call | branch | loop | jump | uses
    text: str  # after the mapping
    depth: int  # braces inside the block's body
    line: int
    source: str  # as written

    def describe(self) -> str:
        mapped = f" (mapped to `{self.text}`)" if self.source != self.text else ""
        return f"{self.kind} `{self.source}`{mapped}"


@dataclass(frozen=True)
class Block:
    backend: str
    name: str
    path: str
    line: int
    end_line: int
    shape: tuple[Event, ...]
    fingerprint: str  # of its code tokens as written: did a change touch this block?

    @property
    def where(self) -> str:
        return f"{self.path}:{self.line}-{self.end_line}"

    def title(self) -> str:
        return f"{SIDE[self.backend]} block `{self.name}` ({self.where})"


@dataclass(frozen=True)
class Location:
    path: str
    line: int
    end_line: int


@dataclass(frozen=True)
class Finding:
    rule: str  # missing-twin | drifted-twin | one-sided-change | duplicate-block | bad-marker
    message: str
    locations: tuple[Location, ...]

    def as_dict(self) -> dict:
        return {"rule": self.rule, "message": self.message,
                "locations": [{"path": loc.path, "line": loc.line, "end_line": loc.end_line} for loc in self.locations]}


@dataclass(frozen=True)
class ParityReport:
    files: int
    pairs: int
    findings: tuple[Finding, ...]

    @property
    def ok(self) -> bool:
        return not self.findings


def file_blocks(path: str, text: str, config: ParityConfig) -> tuple[list[Block], list[Finding]]:
    raw, problems = find_blocks(text, config)
    mapping = _mapping(config)
    watched = {t.text for tokens in mapping.values() for t in tokens if t.kind in ("name", "keyword")}
    blocks = [_shaped(path, b, mapping if b.backend == METAL else {}, watched, config) for b in raw]
    findings = [Finding("bad-marker", p.message, (Location(path, p.line, p.line),)) for p in problems]
    return blocks, findings


def check_files(files: dict[str, str], config: ParityConfig) -> ParityReport:
    """Every file on its own: twins are looked for in the same file only, as the team's rule says."""
    findings, pairs = [], 0
    for path in sorted(files):
        blocks, problems = file_blocks(path, files[path], config)
        found, paired = _pair(blocks, config)
        findings += problems + found
        pairs += len(paired)
    return ParityReport(len(files), pairs, tuple(findings))


def check_change(base: dict[str, str], head: dict[str, str], config: ParityConfig) -> ParityReport:
    """The head checked as a whole, plus every twin pair that the change edited on one side only."""
    report = check_files(head, config)
    findings = list(report.findings)
    for path in sorted(set(base) & set(head)):
        if base[path] == head[path]:
            continue
        before = {(b.backend, b.name): b for b in _unique(file_blocks(path, base[path], config)[0])}
        after = {(b.backend, b.name): b for b in _unique(file_blocks(path, head[path], config)[0])}
        for (backend, name), metal in sorted(after.items()):
            cuda = after.get((CUDA, name))
            if backend != METAL or cuda is None or (METAL, name) not in before or (CUDA, name) not in before:
                continue
            changed = {side: before[(side, name)].fingerprint != block.fingerprint
                       for side, block in ((METAL, metal), (CUDA, cuda))}
            if changed[METAL] != changed[CUDA]:
                edited, other = (metal, cuda) if changed[METAL] else (cuda, metal)
                findings.append(Finding(
                    "one-sided-change",
                    f"this change edits the {edited.title()} but not its {SIDE[other.backend]} twin "
                    f"({other.where}): make the same change there, so that a fix in one backend fixes the other",
                    (Location(path, edited.line, edited.end_line), Location(path, other.line, other.end_line))))
    return ParityReport(report.files, report.pairs, tuple(findings))


def _mapping(config: ParityConfig) -> dict[str, tuple[Token, ...]]:
    out = {}
    for key, value in config.names:
        code, _ = lex_code(value)
        out[key] = tuple(code)
    return out


def _shaped(path: str, raw: RawBlock, mapping: dict, watched: set[str], config: ParityConfig) -> Block:
    prefix = dict(zip((METAL, CUDA), config.tags, strict=True))[raw.backend] if config.style == "prefix" else ""
    tokens: list[tuple[Token, str]] = []  # (token after mapping, its source spelling)
    for token in raw.tokens:
        for mapped in mapping.get(token.text, (token,)) if token.kind in ("name", "keyword", "attribute") else (token,):
            text = mapped.text[len(prefix):] if prefix and mapped.text.startswith(prefix) else mapped.text
            tokens.append((Token(mapped.kind, text, token.line), token.text))
    body = next((i for i, (t, _) in enumerate(tokens) if t.text == "{"), None)
    events, nesting = [], _Nesting()
    for i, (token, source) in enumerate(tokens):
        in_body = body is not None and i > body
        if not in_body:
            if token.kind in ("name", "keyword") and token.text in watched:
                events.append(Event("uses", token.text, 0, token.line, source))
            continue
        depth = nesting.before(token)
        following = tokens[i + 1][0].text if i + 1 < len(tokens) else ""
        if token.kind == "keyword" and token.text in BRANCHES | LOOPS | JUMPS:
            kind = "branch" if token.text in BRANCHES else "loop" if token.text in LOOPS else "jump"
            events.append(Event(kind, token.text, depth, token.line, source))
        elif token.kind == "op" and token.text == "?":
            events.append(Event("branch", "?:", depth, token.line, "?:"))
        elif token.kind == "name" and (following.startswith("(") or following.startswith("<<")):
            events.append(Event("call", token.text, depth, token.line, source))
        elif token.kind in ("name", "keyword") and token.text in watched:
            events.append(Event("uses", token.text, depth, token.line, source))
        nesting.after(token)
    digest = hashlib.sha256("\x00".join(t.text for t in raw.tokens).encode()).hexdigest()
    return Block(raw.backend, raw.name, path, raw.line, raw.end_line, tuple(events), digest)


class _Nesting:
    """How deep a token sits in the block's control structure: `for (...) x();` nests `x` as deep as
    `for (...) { x(); }` does, so brace style is not shape (an `else if` stays at its `if`'s level)."""

    HEADED = frozenset({"if", "for", "while", "switch"})  # a parenthesized header comes before the body

    def __init__(self) -> None:
        self.braces = self.parens = 0
        self.pending: list[int] = []  # brace levels of bodies written without braces, still open
        self.header_at: int | None = None  # the paren level at which a control header's `(...)` closes
        self.awaiting = False  # the next token starts a control body
        self.previous = ""

    def before(self, token: Token) -> int:
        if self.awaiting:
            self.awaiting = False
            if token.text != "{" and not (self.previous == "else" and token.text == "if"):
                self.pending.append(self.braces)
        return self.braces + len(self.pending)

    def after(self, token: Token) -> None:
        if token.kind == "keyword" and token.text in self.HEADED and self.header_at is None:
            self.header_at = self.parens
        elif token.kind == "keyword" and token.text in ("else", "do"):
            self.awaiting = True
        elif token.kind == "punct":
            for ch in token.text:
                self._punct(ch)
        self.previous = token.text

    def _punct(self, ch: str) -> None:
        if ch == "(":
            self.parens += 1
        elif ch == ")":
            self.parens -= 1
            if self.header_at is not None and self.parens == self.header_at:
                self.header_at, self.awaiting = None, True
        elif ch == "{":
            self.braces += 1
        elif ch == "}":
            self.braces -= 1
            self._close_statements()
        elif ch == ";" and self.parens == 0:
            self._close_statements()

    def _close_statements(self) -> None:
        """A statement ended at this brace level: every braceless body it completed ends with it."""
        while self.pending and self.pending[-1] >= self.braces:
            self.pending.pop()


def _unique(blocks: list[Block]) -> list[Block]:
    seen: dict[tuple[str, str], int] = {}
    for block in blocks:
        seen[(block.backend, block.name)] = seen.get((block.backend, block.name), 0) + 1
    return [b for b in blocks if seen[(b.backend, b.name)] == 1]


def _pair(blocks: list[Block], config: ParityConfig) -> tuple[list[Finding], list[tuple[Block, Block]]]:
    findings, pairs = [], []
    by_key: dict[tuple[str, str], list[Block]] = {}
    for block in blocks:
        by_key.setdefault((block.backend, block.name), []).append(block)
    for (backend, name), same in sorted(by_key.items(), key=lambda kv: kv[1][0].line):
        if len(same) > 1:
            findings.append(Finding(
                "duplicate-block", f"{len(same)} {SIDE[backend]} blocks are named `{name}` "
                f"({', '.join(b.where for b in same)}): a name pairs one Metal block with one CUDA block, so give "
                "each its own name", tuple(Location(b.path, b.line, b.end_line) for b in same)))
    for block in sorted(_unique(blocks), key=lambda b: b.line):
        other_side = CUDA if block.backend == METAL else METAL
        twins = by_key.get((other_side, block.name), [])
        if not twins:
            findings.append(Finding(
                "missing-twin", f"{block.title()} has no {SIDE[other_side]} twin in this file: "
                f"{_hint(config, other_side, block.name)}", (Location(block.path, block.line, block.end_line),)))
        elif block.backend == METAL and len(twins) == 1:
            pairs.append((block, twins[0]))
            drift = _drift(block, twins[0])
            if drift:
                findings.append(drift)
    return findings, pairs


def _hint(config: ParityConfig, side: str, name: str) -> str:
    tag = config.tags[0] if side == METAL else config.tags[1]
    if config.style == "markers":
        return (f"write its {SIDE[side]} version beside it, marked `// {tag} {name}` "
                "(or rename this block to the twin's name)")
    if config.style == "ifdef":
        return f"define `{name}` in the `{tag}` arm too (or rename it to match its twin)"
    return f"define `{tag}{name}` too (or rename this function to match its twin)"


def _drift(metal: Block, cuda: Block) -> Finding | None:
    for index in range(max(len(metal.shape), len(cuda.shape))):
        m = metal.shape[index] if index < len(metal.shape) else None
        c = cuda.shape[index] if index < len(cuda.shape) else None
        if m and c and (m.kind, m.text, m.depth) == (c.kind, c.text, c.depth):
            continue
        if m and c and (m.kind, m.text) == (c.kind, c.text):
            what = f"{m.describe()} is nested {m.depth} deep in Metal and {c.depth} deep in CUDA"
        else:
            what = (f"Metal has {m.describe() if m else 'nothing more'} where CUDA has "
                    f"{c.describe() if c else 'nothing more'}")
        m_line = m.line if m else metal.end_line
        c_line = c.line if c else cuda.end_line
        return Finding(
            "drifted-twin",
            f"twins `{metal.name}` drifted: {metal.title()} and {cuda.title()} first differ at "
            f"{metal.path}:{m_line} (Metal) / {cuda.path}:{c_line} (CUDA): {what}",
            (Location(metal.path, m_line, m_line), Location(cuda.path, c_line, c_line)))
    return None
