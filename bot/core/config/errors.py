"""One error for every `.perfbot.toml` mistake, `.perfbot.toml:LINE: key: problem`, built from pydantic's errors."""
from __future__ import annotations

import difflib
import re
import tomllib
import types
import typing
from collections.abc import Iterable

from pydantic import BaseModel, ValidationError
from pydantic_core import ErrorDetails

from bot.core.config.lines import Path, line_for

# Sections written as arrays of tables, and what one of their tables is called in a message.
ARRAYS = {"runners": "runner", "milestones": "milestone"}
_SHAPES = ("model_type", "model_attributes_type", "dict_type", "tuple_type", "list_type")


class ConfigFileError(ValueError):
    """What is wrong, where: `.perfbot.toml:LINE: key: problem` (or the instance file's name)."""

    def __init__(self, key: str, line: int, problem: str, file: str = ".perfbot.toml") -> None:
        super().__init__(f"{file}:{line}: {key}: {problem}")
        self.key, self.line, self.problem, self.file = key, line, problem, file


class FieldError(ValueError):
    """A check of a whole table that blames one of its keys (`field`, a path below the table); `line_of` names
    a different key whose line shows the mistake best (e.g. `output` for a missing `normalize`)."""

    def __init__(self, problem: str, *field: str | int, line_of: tuple = ()) -> None:
        super().__init__(problem)
        self.field, self.line_of = field, line_of


def load_toml(text: str, file: str = ".perfbot.toml") -> dict:
    """The text's tables, or its first syntax mistake as `FILE:LINE: (syntax): problem`."""
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        found = re.search(r"line (\d+)", str(exc))
        line = int(found.group(1)) if found else max(1, len(text.rstrip("\n").splitlines()))  # "end of document"
        raise ConfigFileError("(syntax)", line, str(exc).split(" (at")[0], file) from None


def suggest(key: str, known: Iterable[str]) -> str:
    close = difflib.get_close_matches(key, list(known), n=1)
    return f"; did you mean {close[0]!r}?" if close else f"; known: {', '.join(sorted(known))}"


def first_error(exc: ValidationError, model: type[BaseModel], index: dict[Path, int],
                file: str = ".perfbot.toml") -> ConfigFileError:
    """The first of pydantic's errors, in the file's words and at the line of the value at fault."""
    error = exc.errors()[0]
    loc = tuple(part for part in error["loc"] if part != "[key]")
    cause = (error.get("ctx") or {}).get("error")
    line_loc = loc
    if isinstance(cause, FieldError):
        line_loc = loc + (cause.line_of or cause.field)
        loc = loc + cause.field
    key = ".".join(str(part) for part in loc if isinstance(part, str)) or "(file)"
    return ConfigFileError(key, line_for(index, line_loc), _problem(error, loc, model), file)


def _problem(error: ErrorDetails, loc: Path, model: type[BaseModel]) -> str:
    kind = error["type"]
    if kind == "value_error":
        return str(error["ctx"]["error"])
    if kind == "extra_forbidden":
        known = _fields_at(model, loc[:-1])
        return f"unknown {'section' if len(loc) == 1 else 'key'}{suggest(str(loc[-1]), known)}"
    if kind == "missing":
        description = _fields_at(model, loc[:-1]).get(loc[-1])
        return "is required" + (f": {description}" if description else "")
    if kind in _SHAPES:
        section = str(loc[0]) if loc else "(file)"
        if section in ARRAYS:
            return f"write each {ARRAYS[section]} as a [[{section}]] table"
        if section == "references":
            return "write each reference as a [references.NAME] table"
        return f"must be a table: write it as [{'.'.join(str(p) for p in loc)}]"
    return error["msg"]


def _fields_at(model: type[BaseModel], loc: Path) -> dict[str, str | None]:
    """The keys the table at `loc` knows, with their descriptions: the model's annotations walked down the path."""
    annotation: object = model
    for part in loc:
        annotation = _step(_unwrap(annotation), part)
    table = _unwrap(annotation)
    if isinstance(table, type) and issubclass(table, BaseModel):
        return {name: field.description for name, field in table.model_fields.items()}
    return {}


def _step(annotation: object, part: object) -> object:  # a type annotation
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        field = annotation.model_fields.get(part) if isinstance(part, str) else None
        return field.annotation if field else None
    origin, args = typing.get_origin(annotation), typing.get_args(annotation)
    if origin is dict:
        return args[1]
    if origin in (tuple, list):
        return args[0]
    return None


def _unwrap(annotation: object) -> object:
    """Annotated[X, ...] and X | None are X."""
    while True:
        if typing.get_origin(annotation) is typing.Annotated:
            annotation = typing.get_args(annotation)[0]
        elif typing.get_origin(annotation) in (typing.Union, types.UnionType):
            annotation = next(a for a in typing.get_args(annotation) if a is not type(None))
        else:
            return annotation
