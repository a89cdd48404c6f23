"""What `perfbot check` tells a team to change, decided without I/O: where a key is written, a normalize rule
for lines only one side prints, metrics for the numbers a runtime prints, and a build script for old commits."""
from __future__ import annotations

import re
import shlex

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


def toml_table(pairs: list[tuple[str, str]]) -> str:
    return "{" + ", ".join(f"{name} = '{pattern}'" for name, pattern in pairs) + "}"


def build_script(build: tuple[str, ...] | None, failure: str) -> str:
    """A `[build] script` that builds old commits too: when the build passes a define the failing commit calls
    by another name (its error names it), the script picks the name the checkout uses."""
    command = list(build or ("make",))
    ours = next(((i, m) for i, arg in enumerate(command) if (m := _DEFINE.match(arg))), None)
    theirs = next((a or b for a, b in _MENTIONED.findall(failure) if (a or b) != (ours and ours[1].group(1))), None)
    lines = ["#!/bin/sh", "# Builds any revision: $1 is the checkout, $2 the commit.", "set -eu", 'cd "$1"']
    if ours and theirs:
        index, match = ours
        new = match.group(1)
        lines.append(f"if grep -rqs {new} --include='*.[ch]' .; then define={new}; else define={theirs}; fi")
        command[index] = f'"-D$define{match.group(2) or ""}"'
        lines.append("exec " + " ".join(arg if arg.startswith('"-D$') else shlex.quote(arg) for arg in command))
    else:
        lines.append("# adapt the build to what differs at older commits, e.g. a renamed define or target")
        lines.append("exec " + " ".join(shlex.quote(arg) for arg in command))
    return "\n".join(lines) + "\n"
