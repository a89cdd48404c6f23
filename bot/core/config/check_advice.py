"""What `perfbot check` tells a team to change, decided without I/O: where a key is written, a normalize rule
for lines only one side prints, metrics for the numbers a runtime prints, and a build script for old commits."""
from __future__ import annotations

import re
import shlex
from collections.abc import Iterable

from bot.core.config.lines import Path, line_for
from bot.core.reports.codeblocks import undeclared_tag
from bot.core.reports.records import PerfIssue

# "- ITRS: 1,234", "time = 0.52s", "GC collections: 3": a label, then a number.
_STAT = re.compile(r"^\W*([A-Za-z][A-Za-z _-]{0,30}?)\s*[:=]\s*[0-9][0-9,._]*\b")
_DEFINE = re.compile(r"^-D([A-Za-z_][A-Za-z0-9_]*)(=.*)?$")
_MENTIONED = re.compile(r"-D([A-Z_][A-Z0-9_]{2,})|'([A-Z_][A-Z0-9_]{2,})' undeclared")


def place(index: dict[Path, int] | None, section: str, key: str) -> str:
    """`[run] language (.perfbot.toml:5)`, or where to add a key the file does not write yet."""
    name = f"[{section}] {key}"
    if index is None:
        return name
    if (section, key) in index:
        return f"{name} (.perfbot.toml:{index[(section, key)]})"
    if (section,) in index:
        return f"{name} (add it under [{section}], .perfbot.toml:{line_for(index, (section,))})"
    return f"{name} (add a [{section}] table)"


def write_in(index: dict[Path, int] | None, section: str, lines: list[str]) -> str:
    """A fix that is text to paste: where, then the lines (a line already written with the same key is
    replaced)."""
    keys = [line.split("=", 1)[0].strip() for line in lines]
    written = sorted(index[(section, key)] for key in keys if index and (section, key) in index)
    where = (f"[{section}], replacing .perfbot.toml:{', '.join(map(str, written))}" if written else
             f"[{section}] (.perfbot.toml:{index[(section,)]})" if index and (section,) in index else
             f"a new [{section}] table")
    return f"in {where}, write:\n" + "\n".join(lines)


def fence_fix(record: PerfIssue, declared: tuple[str, ...], index: dict[Path, int] | None) -> str | None:
    """When a report has no program because its program's fence tag is the runtime's own, the `[run] fence`
    line that declares it (None when that is not the reason)."""
    tag = undeclared_tag(record.code_blocks) if not record.blocks("language") else None
    if tag is None:
        return None
    block = next(b for b in record.code_blocks if b.tag == tag)
    tags = ", ".join(f'"{t}"' for t in (*declared, tag))
    return (f"fence tag `{tag}` (line {block.line} of the report) is not a language tag perfbot knows; if it is "
            f"your runtime's, {write_in(index, 'run', [f'fence = [{tags}]'])}")


def normalize_rules(first: str, second: str) -> list[tuple[str, str]]:
    """Rules that drop the lines only one output prints, when they look like statistics; [] when the
    outputs differ in their results (no rule should hide that)."""
    first_lines, second_lines = first.splitlines(), second.splitlines()
    extra = [line for line in first_lines if line not in second_lines] + \
            [line for line in second_lines if line not in first_lines]
    rules: list[tuple[str, str]] = []
    for line in extra:
        found = _STAT.match(line)
        if found is None:
            return []
        prefix = line[:found.end(1)]
        rule = (f"(?m)^{_escape(prefix)}.*\\n?", "")
        if rule not in rules:
            rules.append(rule)
    return rules


def metric_patterns(output: str) -> list[tuple[str, str]]:
    """`name = regex` pairs for the statistics lines of an output, to capture with each sample."""
    out: list[tuple[str, str]] = []
    for line in output.splitlines():
        found = _STAT.match(line)
        if found is None:
            continue
        name = re.sub(r"[^a-z0-9]+", "_", found.group(1).lower()).strip("_")[:32]
        if name and name[0].isalpha() and name not in dict(out):
            out.append((name, f"{_escape(line[:found.end(1)])}\\s*[:=]\\s*([0-9][0-9,._]*)"))
    return out


def _escape(text: str) -> str:
    """re.escape, but spaces stay spaces: the rule is read by people in their configuration."""
    return re.sub(r"([.^$*+?{}\[\]\\|()])", r"\\\1", text)


def toml_pairs(rules: list[tuple[str, str]]) -> str:
    return "[" + ", ".join(f"['{pattern}', '{replacement}']" for pattern, replacement in rules) + "]"


def toml_list(items: Iterable[str]) -> str:
    return "[" + ", ".join('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items) + "]"


def toml_table(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{name} = '{pattern}'" for name, pattern in pairs) + "}"


def build_defines(build: tuple[str, ...] | None) -> list[str]:
    """The names a build command defines for the compiler: `-DNAME=...` arguments, or inside a `sh -c` line."""
    if build and len(build) == 3 and build[:2] == ("sh", "-c"):
        return re.findall(r"(?:^|\s)-D([A-Za-z_][A-Za-z0-9_]*)", build[2])
    return [m.group(1) for arg in build or () if (m := _DEFINE.match(arg))]


def build_script(build: tuple[str, ...] | None, failure: str, *, renamed: str | None = None,
                 flags: tuple[tuple[str, str, str], ...] = (), lone: tuple[str, ...] = ()) -> str:
    """A `[build] script` that builds old commits too. A define the failing commit calls by another name (its
    error names it, or `renamed`) is picked by the name the checkout uses; each of `flags` (flag, runtime,
    since) that older commits do not accept is dropped there, with the value after it unless it is in `lone`, by a
    wrapper the script puts in the runtime's place, so `[run] language` stays one line for every revision."""
    command = list(build or ("make",))
    defines = build_defines(tuple(command))
    new = defines[0] if defines else None
    theirs = renamed or next((a or b for a, b in _MENTIONED.findall(failure) if (a or b) != new), None)
    lines = ["#!/bin/sh", "# Builds any revision: $1 is the checkout, $2 the commit.", "set -eu", 'cd "$1"']
    run = "" if flags else "exec "
    if new and theirs:
        lines.append(f"if grep -rqs {new} --include='*.[ch]' .; then define={new}; else define={theirs}; fi")
        shared = sorted(set(new.split("_")) & set(theirs.split("_")) - {""}, key=len)
        if shared:  # renamed more than once: the name this checkout guards on, by the word the names share
            lines += ["if ! grep -rqs $define --include='*.[ch]' .; then",
                      "  define=$(grep -rhoE '#[[:space:]]*ifndef[[:space:]]+[A-Z0-9_]*"
                      f"{shared[-1]}[A-Z0-9_]*' --include='*.[ch]' . | awk '{{print $NF}}' | head -n 1)", "fi"]
        if len(command) == 3 and command[:2] == ["sh", "-c"]:  # a README's line: run here, in a subshell
            lines.append("(" + re.sub(rf"-D{new}(?=[=\s]|$)", '-D"$define"', command[2]) + ")")
        else:
            lines.append(run + " ".join(f'"-D$define{arg[len(new) + 2:]}"' if _DEFINE.match(arg) and
                                        arg[2:].split("=")[0] == new else shlex.quote(arg) for arg in command))
    else:
        if not flags:
            lines.append("# adapt the build to what differs at older commits, e.g. a renamed define or target")
        lines.append(run + " ".join(shlex.quote(arg) for arg in command))
    if flags:  # one wrapper for all of them: a second `mv` would wrap the first wrapper and lose the runtime
        binary = shlex.quote(flags[0][1])
        lines.append("drop=")
        for flag, runtime, since in flags:
            value = "" if flag in lone else "skip=1; "
            lines += [f"# {runtime} takes {flag} since {since}; before that, a wrapper drops it"
                      + ("" if flag in lone else " (and its value)"),
                      f"if ! grep -rqs --exclude-dir=.git --exclude='*.md' --exclude='*.toml' -- '\"{flag}' .; then",
                      f"  drop=\"$drop  {flag}) {value}continue;; {flag}?*) continue;;\\n\"", "fi"]
        lines += ['if [ -n "$drop" ]; then', f"  mv {binary} {binary}.perfbot-real",
                  "  { cat <<'EOF'", "#!/bin/sh", "skip=", "for a do", "  shift",
                  '  if [ -n "$skip" ]; then skip=; continue; fi', '  case "$a" in', "EOF",
                  '  printf "$drop"', "  cat <<'EOF'", "  esac", '  set -- "$@" "$a"', "done",
                  'exec "$0.perfbot-real" "$@"', "EOF", f"  }} > {binary}", f"  chmod +x {binary}", "fi"]
    return "\n".join(lines) + "\n"


# `#define HEAP_BYTES (1ULL << 40)` inside `#ifndef HEAP_BYTES`: a size the build can pass as -D.
_SIZE_DEFINE = re.compile(r"^\s*#\s*define\s+([A-Z_][A-Z0-9_]*(?:HEAP|MEM|ARENA|RESERVE|SIZE|WORDS|CELLS|BYTES|CAP)"
                          r"[A-Z0-9_]*)\s+(.+?)\s*(?://.*|/\*.*)?$", re.MULTILINE)
_C_NUMBER = re.compile(r"(0[xX][0-9a-fA-F]+|[0-9]+)[uUlL]*")


def c_value(expression: str) -> int | None:
    """The value of a constant C expression of numbers, + * << and parentheses; None for anything else."""
    text = _C_NUMBER.sub(lambda m: str(int(m.group(1), 0)), expression.strip())
    if not re.fullmatch(r"[0-9+*<() ]+", text) or "**" in text:
        return None
    tokens = re.findall(r"[0-9]+|<<|[+*()]", text)
    position = 0

    def sum_() -> int:  # shift < sum < product, as in C
        nonlocal position
        value = product()
        while position < len(tokens) and tokens[position] == "+":
            position += 1
            value += product()
        return value

    def shift() -> int:
        nonlocal position
        value = sum_()
        while position < len(tokens) and tokens[position] == "<<":
            position += 1
            value <<= min(sum_(), 62)
        return value

    def product() -> int:
        nonlocal position
        value = atom()
        while position < len(tokens) and tokens[position] == "*":
            position += 1
            value *= atom()
        return value

    def atom() -> int:
        nonlocal position
        token = tokens[position] if position < len(tokens) else ")"
        position += 1
        if token == "(":
            value = shift()
            position += 1
            return value
        return int(token) if token.isdigit() else 0

    try:
        value = shift()
    except (IndexError, ValueError):
        return None
    return value if position == len(tokens) else None


def heap_define(sources: dict[str, str], reserved_mb: int) -> tuple[str, int, int] | None:
    """The define that sizes what the runtime reserved: (name, its value, bytes per unit), when one defined
    under `#ifndef NAME` (so -D overrides it) times 1, 2, 4, 8 or 16 is the reservation the failure named."""
    for text in sources.values():
        for name, expression in _SIZE_DEFINE.findall(text):
            value = c_value(expression)
            if value is None or not re.search(rf"#\s*ifndef\s+{name}\b", text):
                continue
            for unit in (1, 2, 4, 8, 16):
                if (value * unit) >> 20 == reserved_mb:
                    return name, value, unit
    return None


def with_define(command: tuple[str, ...], name: str, value: int) -> tuple[str, ...] | None:
    """The build command passing -DNAME=value to the compiler it runs; None when it runs none perfbot can see."""
    define = f"-D{name}={value}"
    kept = tuple(arg for arg in command if not arg.startswith(f"-D{name}="))
    if kept and kept[0].rsplit("/", 1)[-1] in ("cc", "gcc", "clang"):
        return (kept[0], define, *kept[1:])
    if len(kept) == 3 and kept[:2] == ("sh", "-c"):
        script = _with_compiler_flag(re.sub(rf" -D{name}=\S+", "", kept[2]), define)
        return ("sh", "-c", script) if script else None
    return None


def _with_compiler_flag(script: str, flag: str) -> str | None:
    """`flag` after the first command of a shell line that runs a C compiler (`cd clang && gcc ...`: the gcc,
    not the folder named clang)."""
    parts = re.split(r"(&&|\|\||;|\|)", script)
    for i, part in enumerate(parts):
        found = re.match(r"\s*(?:\S*/)?(?:cc|gcc|clang)(?=\s|$)", part)
        if found:
            parts[i] = f"{found.group(0)} {flag}{part[found.end():]}"
            return "".join(parts)
    return None
