"""The configuration reference, generated from the model: one table per section (key, accepted values,
default, meaning), so the documentation cannot fall behind what the parser accepts."""
from __future__ import annotations

import json

from bot.core.config.model import json_schema

_ARRAYS = ("runners", "milestones")


def reference_markdown() -> str:
    schema = json_schema()
    definitions = schema.get("$defs", {})
    out = ["# .perfbot.toml reference", "", "Generated from the model (`perfbot config reference`); every key is "
           "optional unless marked required.", ""]
    for section, spec in schema["properties"].items():
        name = _target(spec)
        if name is None:
            continue
        table = definitions[name]
        header = f"[[{section}]]" if section in _ARRAYS else f"[{section}.NAME]" if section == "references" \
            else f"[{section}]"
        out += [f"## `{header}`", ""] + ([table["description"].strip(), ""] if table.get("description") else [])
        out += ["| key | value | default | meaning |", "| --- | --- | --- | --- |"]
        required = set(table.get("required", ()))
        for key, field in table.get("properties", {}).items():
            default = "required" if key in required else _shown(field.get("default"))
            # `<` escaped: "program.<fence tag>" is text, not an HTML tag a renderer would swallow.
            meaning = field.get("description", "").replace("|", "\\|").replace("<", "&lt;")
            out.append(f"| `{key}` | {_kind(field)} | {default} | {meaning} |")
        out.append("")
    return "\n".join(out)


def _target(spec: dict) -> str | None:
    """The definition a section refers to, through arrays, maps and `X | None`."""
    for candidate in (spec, spec.get("items", {}), spec.get("additionalProperties", {}), *spec.get("anyOf", ())):
        if isinstance(candidate, dict) and "$ref" in candidate:
            return candidate["$ref"].rsplit("/", 1)[-1]
        if isinstance(candidate, dict) and "items" in candidate and "$ref" in candidate["items"]:
            return candidate["items"]["$ref"].rsplit("/", 1)[-1]
    return None


def _kind(field: dict) -> str:
    options = [o for o in field.get("anyOf", [field]) if o.get("type") != "null"]
    return " or ".join(_one(o) for o in options) or "any"


def _one(spec: dict) -> str:
    if "enum" in spec:
        return " \\| ".join(f'`"{v}"`' for v in spec["enum"])
    if "const" in spec:
        return f'`"{spec["const"]}"`'
    if spec.get("type") == "array":
        item = spec.get("items") or (spec.get("prefixItems") or [{}])[0]
        return f"list of {_one(item) if isinstance(item, dict) else 'values'}"
    if spec.get("type") == "object":
        return "table"
    return spec.get("format", spec.get("type", "value"))


def _shown(value) -> str:
    return "" if value is None else f"`{json.dumps(value)}`"
