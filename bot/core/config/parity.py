"""`[parity]`: which files hold paired Metal/CUDA code, how a pair is marked, and the name mapping applied before
two twins' shapes are compared.

    [parity]
    files = ["runtime/gpu/*.h"]   # globs from the repository root: * and ? stay in one folder, ** crosses folders
    style = "markers"             # markers: // @metal NAME ... // @cuda NAME before each block
                                  # ifdef: the arms of #if defined(__METAL_VERSION__) / #elif defined(__CUDACC__)
                                  # prefix: functions metal_NAME and cuda_NAME
    metal = "@metal"              # the marker tag, the macro of the Metal arm, or the function prefix
    cuda = "@cuda"
    [parity.names]                # a Metal name = how the CUDA code spells it
    threadgroup = "__shared__"
"""
from __future__ import annotations

import re
from typing import Annotated, Literal

from pydantic import BeforeValidator, Field, model_validator

from bot.core.config.errors import FieldError
from bot.core.config.values import Declared, choice

STYLE_DEFAULTS = {"markers": ("@metal", "@cuda"), "ifdef": ("__METAL_VERSION__", "__CUDACC__"),
                  "prefix": ("metal_", "cuda_")}
_IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_TAG = re.compile(r"@?[A-Za-z_][A-Za-z0-9_-]*")
_GLOB = re.compile(r"[A-Za-z0-9_.*?\[\]/{},-]+")


def _globs(value: object) -> tuple[str, ...]:
    if not isinstance(value, (list, tuple)) or not value or not all(isinstance(v, str) for v in value):
        raise ValueError('must list globs of files, e.g. ["runtime/gpu/*.h"]')
    for glob in value:
        if not _GLOB.fullmatch(glob) or glob.startswith("/") or ".." in glob.split("/"):
            raise ValueError(f"{glob[:60]!r} must be a glob relative to the repository root, without '..', e.g. "
                             "\"runtime/gpu/*.h\"")
    return tuple(value)


def _text(value: object) -> str:
    if not isinstance(value, str):
        raise ValueError(f"{str(value)[:40]!r} must be a string: a marker tag, a macro or a function prefix")
    return value


def _names(value: object) -> tuple[tuple[str, str], ...]:
    if isinstance(value, (list, tuple)):
        return tuple(value)  # already read
    if not isinstance(value, dict):
        raise ValueError('must be a table: write it as [parity.names] with lines like threadgroup = "__shared__"')
    for key, spelling in value.items():
        if not _IDENT.fullmatch(key):
            raise FieldError("must be a Metal identifier", key)
        if not isinstance(spelling, str) or not spelling.strip() or len(spelling) > 200 or not spelling.isprintable():
            raise FieldError('must be how the CUDA code spells it, e.g. "__shared__" (one line, at most 200)', key)
    return tuple((key, spelling.strip()) for key, spelling in value.items())


class ParityConfig(Declared):
    files: Annotated[tuple[str, ...], BeforeValidator(_globs)] = Field(
        (), description='the files holding paired backends, e.g. ["runtime/gpu/*.h"]')
    style: Annotated[Literal["markers", "ifdef", "prefix"], BeforeValidator(choice(*STYLE_DEFAULTS))] = "markers"
    metal: Annotated[str, BeforeValidator(_text)] | None = Field(
        None, description="the marker tag, the macro of the Metal arm, or the function prefix (default: the style's)")
    cuda: Annotated[str, BeforeValidator(_text)] | None = None
    names: Annotated[tuple[tuple[str, str], ...], BeforeValidator(_names)] = ()  # (Metal name, CUDA spelling)

    @model_validator(mode="before")
    @classmethod
    def _tags_follow_the_style(cls, data: object) -> object:  # the table as written
        style = data.get("style", "markers") if isinstance(data, dict) else None
        if isinstance(data, dict) and style in STYLE_DEFAULTS:
            metal, cuda = STYLE_DEFAULTS[style]
            return {"metal": metal, "cuda": cuda, **data}
        return data

    @model_validator(mode="after")
    def _tags_fit_the_style(self) -> ParityConfig:
        pattern = _TAG if self.style == "markers" else _IDENT
        example = {"markers": '"@metal"', "ifdef": '"__METAL_VERSION__"', "prefix": '"metal_"'}[self.style]
        what = "a marker tag" if self.style == "markers" else "an identifier"
        for side in ("metal", "cuda"):
            value = getattr(self, side)
            if not isinstance(value, str) or not pattern.fullmatch(value) or len(value) > 40:
                raise FieldError(f"{str(value)[:40]!r} must be {what} for style {self.style}, e.g. {example}", side)
        if self.metal == self.cuda:
            raise FieldError("must differ from parity.metal", "cuda")
        return self

    @property
    def tags(self) -> tuple[str, str]:
        """(Metal, CUDA) as checked: the style's defaults fill in what the file left out."""
        metal, cuda = STYLE_DEFAULTS[self.style]
        return self.metal or metal, self.cuda or cuda

    def covers(self, path: str) -> bool:
        return any(glob_regex(g).fullmatch(path) for g in self.files)


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
