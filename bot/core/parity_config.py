"""`[parity]` of `.perfbot.toml`: which files hold paired Metal/CUDA code, how a pair is marked, and the name
mapping applied before two twins' shapes are compared; parsed strictly.

    [parity]
    files = ["runtime/gpu/*.h"]   # globs from the repository root: * and ? stay in one folder, ** crosses folders
    style = "markers"             # markers: // @metal NAME ... // @cuda NAME before each block
                                  # ifdef: the arms of #if defined(__METAL_VERSION__) / #elif defined(__CUDACC__)
                                  # prefix: functions metal_NAME and cuda_NAME
    metal = "@metal"              # the marker tag, the macro of the Metal arm, or the function prefix
    cuda = "@cuda"
    [parity.names]                # a Metal name = how the CUDA code spells it
    threadgroup = "__shared__"
    thread_position_in_grid = "blockIdx*blockDim+threadIdx"
"""
from __future__ import annotations

import re
from dataclasses import dataclass

from bot.core.config_checks import ConfigFileError, line_of, suggest

PARITY_KEYS = {"files": "globs", "style": ("markers", "ifdef", "prefix"), "metal": "tag", "cuda": "tag",
               "names": "names"}
STYLE_DEFAULTS = {"markers": ("@metal", "@cuda"), "ifdef": ("__METAL_VERSION__", "__CUDACC__"),
                  "prefix": ("metal_", "cuda_")}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAG = re.compile(r"@?[A-Za-z_][A-Za-z0-9_-]*")
_GLOB = re.compile(r"[A-Za-z0-9_.*?\[\]/{},-]+")


@dataclass(frozen=True)
class ParityConfig:
    files: tuple[str, ...] = ()
    style: str = "markers"
    metal: str = "@metal"
    cuda: str = "@cuda"
    names: tuple[tuple[str, str], ...] = ()  # (Metal name, CUDA spelling), in the order written
    declared: bool = False  # the file has a [parity] section

    def covers(self, path: str) -> bool:
        return any(glob_regex(g).fullmatch(path) for g in self.files)


def parse_parity(table, lines: list[str]) -> ParityConfig:
    if table is None:
        return ParityConfig()
    if not isinstance(table, dict):
        raise ConfigFileError("parity", line_of(lines, "parity"), "must be a table: write it as [parity]")
    for key in table:
        if key not in PARITY_KEYS:
            raise ConfigFileError(f"parity.{key}", line_of(lines, key), f"unknown key{suggest(key, PARITY_KEYS)}")
    if "files" not in table:
        raise ConfigFileError("parity.files", line_of(lines, "parity"),
                              'is required: list the files holding paired backends, e.g. ["runtime/gpu/*.h"]')
    files = _globs(table["files"], line_of(lines, "files"))
    style = table.get("style", "markers")
    if style not in STYLE_DEFAULTS:
        raise ConfigFileError("parity.style", line_of(lines, "style"),
                              f"{str(style)[:40]!r} is not one of {', '.join(STYLE_DEFAULTS)}")
    metal, cuda = (_tag(f"parity.{side}", table.get(side, default), style, line_of(lines, side))
                   for side, default in zip(("metal", "cuda"), STYLE_DEFAULTS[style]))
    if metal == cuda:
        raise ConfigFileError("parity.cuda", line_of(lines, "cuda"), "must differ from parity.metal")
    names = _names(table.get("names", {}), lines)
    return ParityConfig(files, style, metal, cuda, names, declared=True)


def glob_regex(glob: str) -> re.Pattern:
    """git's glob pathspec rules: `*`, `?` and `[...]` stay inside one folder, `**/` matches any folders."""
    out, i = [], 0
    while i < len(glob):
        if glob.startswith("**/", i):
            out.append("(?:[^/]+/)*")
            i += 3
        elif glob.startswith("**", i):
            out.append(".*")
            i += 2
        elif glob[i] == "*":
            out.append("[^/]*")
            i += 1
        elif glob[i] == "?":
            out.append("[^/]")
            i += 1
        elif glob[i] == "[" and "]" in glob[i + 1:]:
            end = glob.index("]", i + 1)
            out.append("[" + re.escape(glob[i + 1:end]).replace("\\-", "-") + "]")
            i = end + 1
        else:
            out.append(re.escape(glob[i]))
            i += 1
    return re.compile("".join(out))


def _globs(value, line: int) -> tuple[str, ...]:
    if not isinstance(value, list) or not value or not all(isinstance(v, str) for v in value):
        raise ConfigFileError("parity.files", line, 'must list globs of files, e.g. ["runtime/gpu/*.h"]')
    for glob in value:
        if not _GLOB.fullmatch(glob) or glob.startswith("/") or ".." in glob.split("/"):
            raise ConfigFileError("parity.files", line, f"{glob[:60]!r} must be a glob relative to the repository "
                                  "root, without '..', e.g. \"runtime/gpu/*.h\"")
    return tuple(value)


def _tag(key: str, value, style: str, line: int) -> str:
    pattern = _TAG if style == "markers" else _IDENT
    example = {"markers": '"@metal"', "ifdef": '"__METAL_VERSION__"', "prefix": '"metal_"'}[style]
    if not isinstance(value, str) or not pattern.fullmatch(value) or len(value) > 40:
        what = "a marker tag" if style == "markers" else "an identifier"
        raise ConfigFileError(key, line, f"{str(value)[:40]!r} must be {what} for style {style}, e.g. {example}")
    return value


def _names(table, lines: list[str]) -> tuple[tuple[str, str], ...]:
    header = next((n for n, text in enumerate(lines, 1) if re.match(r"^\s*\[\s*parity\.names\s*\]", text)), None)
    where = lambda key: next((n for n, text in enumerate(lines, 1) if n > (header or 0)  # noqa: E731
                              and re.match(rf"^\s*{re.escape(key)}\s*=", text)), header or line_of(lines, "names"))
    if not isinstance(table, dict):
        raise ConfigFileError("parity.names", line_of(lines, "names"),
                              'must be a table: write it as [parity.names] with lines like threadgroup = "__shared__"')
    out = []
    for key, value in table.items():
        if not _IDENT.fullmatch(key):
            raise ConfigFileError(f"parity.names.{key}", where(key), "must be a Metal identifier")
        if not isinstance(value, str) or not value.strip() or len(value) > 200 or not value.isprintable():
            raise ConfigFileError(f"parity.names.{key}", where(key),
                                  'must be how the CUDA code spells it, e.g. "__shared__" (one line, at most 200)')
        out.append((key, value.strip()))
    return tuple(out)
