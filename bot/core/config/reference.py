"""The configuration reference, generated from the model: one table per section (key, accepted values,
default, meaning), so the documentation cannot fall behind what the parser accepts."""
from __future__ import annotations

import json

from bot.core.config.model import json_schema

_ARRAYS = ("milestones",)
# A line as it would be written, for each key without a default to show (the others show `key = default`).
EXAMPLES = {
    "build.command": 'command = ["make", "-j2"]', "build.script": 'script = ".perfbot/build.sh"',
    "run.language": 'language = ["./bin/run", "{file}", "--threads", "{threads}"]',
    "run.program": 'program = "main.hvm4"', "run.fence": 'fence = ["tally"]',
    "suite.command": 'command = ["make", "bench"]',
    "suite.timeout_seconds": "timeout_seconds = 600", "verify.threads": "threads = [1, 2, 4, 8]",
    "verify.processes": "processes = 64",
    "milestones.name": 'name = "seq reports near C"',
    "milestones.kind": 'kind = "seq-near-c"', "milestones.due": "due = 2026-12-31",
    "milestones.threshold": "threshold = 2.0", "milestones.backend": 'backend = "c"',
    "milestones.target": "target = 6.0", "milestones.runner": 'runner = "mini-1"',
    "references.run": 'run = ["./bin/run", "{file}"]', "references.repository": 'repository = "https://github.com/org/runtime-v1"',
    "references.branch": 'branch = "v1"', "references.build": 'build = ["make"]',
    "references.program": 'program = "main.hvm"', "references.factor": "factor = 1.2",
    "parity.metal": 'metal = "runtime/metal/"', "parity.cuda": 'cuda = "runtime/cuda/"',
    "notify.webhook_url": 'webhook_url = "https://chat.example/hooks/perf"',
    "guards.schedule": 'schedule = "daily 03:00"', "guards.runner": 'runner = "mini-1"',
    "gpu.run": 'run = ["./bin/run", "--gpu", "{file}"]', "gpu.auto": 'auto = ["./bin/run", "{file}"]',
    "new.program": 'program = "sum 1000"', "new.translation": 'translation = "int main(void) { return 0; }"',
    "new.prints": 'prints = "500500"',
}


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
        out += ["| key | value | default | example | meaning |", "| --- | --- | --- | --- | --- |"]
        required = set(table.get("required", ()))
        for key, field in table.get("properties", {}).items():
            default = "required" if key in required else _shown(field.get("default"))
            # `<` escaped: "program.<fence tag>" is text, not an HTML tag a renderer would swallow.
            meaning = field.get("description", "").replace("|", "\\|").replace("<", "&lt;")
            out.append(f"| `{key}` | {_kind(field)} | {default} | {_example(section, key, field)} | {meaning} |")
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


def _shown(value: object) -> str:  # a JSON Schema default
    return "" if value is None else f"`{json.dumps(value)}`"


def _example(section: str, key: str, field: dict) -> str:
    written = EXAMPLES.get(f"{section}.{key}")
    if written is None and field.get("default") is not None:
        written = f"{key} = {_toml(field['default'])}"
    return "`" + written.replace("|", "\\|") + "`" if written else ""


def _toml(value: object) -> str:  # a JSON Schema default
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, dict):
        return "{" + ", ".join(f"{k} = {_toml(v)}" for k, v in value.items()) + "}"
    if isinstance(value, list):
        return "[" + ", ".join(_toml(v) for v in value) + "]"
    return json.dumps(value)
