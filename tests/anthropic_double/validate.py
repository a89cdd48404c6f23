"""Checks of a Messages API request body, as the real API makes them, for /v1/messages, count_tokens and
each request of a Message Batch.

`check_request` returns `Findings`: `problems` (the API would refuse the request; the first one is the
answer, all are recorded as violations), `house_rules` (the API accepts it, but perfbot's own rules do not:
recorded as violations, answered normally) and `unsupported` (a valid request the double cannot answer,
such as `stream: true`).

Top-level rules: required fields, no unknown fields ("x: Extra inputs are not permitted"), the model in the
double's allowed set (404 not_found_error otherwise, like the API), `max_tokens` an integer from 0 (0 only
pre-warms the cache, and not in a batch) up to the model's limit, tools with a valid name, unique names and
an object `input_schema` that is valid JSON Schema (draft 2020-12), `tool_choice` naming a defined tool and
not forcing a tool while thinking, thinking budgets, at most 4 `cache_control` markers, 1-hour ones before
5-minute ones, and for API version 2026-10-21 no `temperature`, `top_p` or `top_k`.
"""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import jsonschema

from .errors import ApiError, invalid
from .validate_blocks import VERSION_2026, PromptChecker

MAX_CACHE_BREAKPOINTS = 4
TOOL_NAME = re.compile(r"^[a-zA-Z0-9_-]{1,128}$")
TOOL_KEYS = {"name", "description", "input_schema", "cache_control", "type", "strict", "input_examples",
             "allowed_callers", "defer_loading", "eager_input_streaming"}
SAMPLING_FIELDS = {"temperature", "top_p", "top_k"}  # removed in 2026-10-21
COMMON_FIELDS = {"model", "messages", "system", "tools", "tool_choice", "thinking", "cache_control",
                 "output_config", "speed"}
MESSAGE_FIELDS = COMMON_FIELDS | {"max_tokens", "stream", "metadata", "stop_sequences", "service_tier",
                                  "container", "diagnostics", "inference_geo"}
COUNT_TOKENS_FIELDS = COMMON_FIELDS
ENDPOINTS = ("messages", "count_tokens", "batch")


@dataclass
class Findings:
    problems: list[ApiError] = field(default_factory=list)
    house_rules: list[str] = field(default_factory=list)
    unsupported: list[str] = field(default_factory=list)


def check_request(body: Any, *, endpoint: str, version: str, models: Mapping[str, int],
                  strict_alternation: bool = True, extra_fields: frozenset[str] = frozenset()) -> Findings:
    """Check one request body; `models` maps each allowed model to its largest `max_tokens`."""
    assert endpoint in ENDPOINTS, endpoint
    findings = Findings()
    if not isinstance(body, dict):
        findings.problems.append(invalid("Request body must be a JSON object"))
        return findings
    prompt = PromptChecker(version, strict_alternation)
    fail = prompt.fail

    allowed = (COUNT_TOKENS_FIELDS if endpoint == "count_tokens" else MESSAGE_FIELDS) | extra_fields
    if version < VERSION_2026 and endpoint != "count_tokens":
        allowed = allowed | SAMPLING_FIELDS
    for key in sorted(body.keys() - allowed):
        fail(f"{key}: Extra inputs are not permitted")
    required = ("model", "messages") if endpoint == "count_tokens" else ("model", "messages", "max_tokens")
    for key in required:
        if key not in body:
            fail(f"{key}: Field required")

    model = body.get("model")
    if "model" in body and not isinstance(model, str):
        fail("model: Input should be a valid string")
    elif isinstance(model, str) and model not in models:
        prompt.problems.append(ApiError(404, f"model: {model}"))
    if "max_tokens" in body and endpoint != "count_tokens":
        _check_max_tokens(body["max_tokens"], endpoint, models.get(model) if isinstance(model, str) else None, fail)
    stream = body.get("stream")
    if stream is not None and not isinstance(stream, bool):
        fail("stream: Input should be a valid boolean")
    elif stream is True:
        if endpoint == "batch":
            fail("stream: streaming is not supported for requests in a Message Batch")
        else:
            findings.unsupported.append("stream: true (the double answers non-streaming requests only)")

    # in the order the API processes the prompt, so the cache_control markers are collected in that order
    tool_names = _check_tools(body.get("tools"), prompt, findings.house_rules)
    prompt.system(body.get("system"))
    prompt.messages(body.get("messages"))
    prompt.cache_control("cache_control", body.get("cache_control"))  # top-level: marks the last block
    _check_tool_choice(body.get("tool_choice"), tool_names, body.get("thinking"), fail)
    _check_thinking(body.get("thinking"), body.get("max_tokens"), fail)
    _check_sampling_and_misc(body, fail)

    if len(prompt.cache_ttls) > MAX_CACHE_BREAKPOINTS:
        fail(f"A maximum of {MAX_CACHE_BREAKPOINTS} blocks with cache_control may be provided. "
             f"Found {len(prompt.cache_ttls)}.")
    if "5m" in prompt.cache_ttls and "1h" in prompt.cache_ttls[prompt.cache_ttls.index("5m"):]:
        fail("cache_control: a ttl='1h' cache_control block must not come after a ttl='5m' cache_control block "
             "(order: tools, system, messages)")
    findings.problems.extend(prompt.problems)
    return findings


def _check_max_tokens(max_tokens: Any, endpoint: str, limit: int | None, fail) -> None:
    if not isinstance(max_tokens, int) or isinstance(max_tokens, bool):
        return fail("max_tokens: Input should be a valid integer")
    minimum = 1 if endpoint == "batch" else 0  # 0 pre-warms the prompt cache; pointless inside a batch
    if max_tokens < minimum:
        return fail(f"max_tokens: Input should be greater than or equal to {minimum}")
    if limit is not None and max_tokens > limit:
        fail(f"max_tokens: {max_tokens} > {limit}, which is the maximum allowed number of output tokens for this model")


def _check_tools(tools: Any, prompt: PromptChecker, house_rules: list[str]) -> set[str]:
    if tools is None:
        return set()
    if not isinstance(tools, list):
        prompt.fail("tools: Input should be a valid list")
        return set()
    names: set[str] = set()
    for index, tool in enumerate(tools):
        where = f"tools.{index}"
        if not isinstance(tool, dict):
            prompt.fail(f"{where}: Input should be a valid dictionary")
            continue
        name = tool.get("name")
        if not isinstance(name, str):
            prompt.fail(f"{where}.name: Field required")
        elif not TOOL_NAME.match(name):
            prompt.fail(f"{where}.name: String should match pattern '^[a-zA-Z0-9_-]{{1,128}}$'")
        elif name in names:
            prompt.fail(f"tools: Tool names must be unique (found {name!r} twice)")
        else:
            names.add(name)
        prompt.cache_control(where, tool.get("cache_control"))
        if tool.get("type") not in (None, "custom"):
            continue  # a server tool (web search, code execution...): its own fixed shape, not checked here
        where = f"{where}.custom"
        for key in sorted(tool.keys() - TOOL_KEYS):
            prompt.fail(f"{where}.{key}: Extra inputs are not permitted")
        schema = tool.get("input_schema")
        if schema is None:
            prompt.fail(f"{where}.input_schema: Field required")
        elif not isinstance(schema, dict):
            prompt.fail(f"{where}.input_schema: Input should be a valid dictionary")
        elif schema.get("type") != "object":
            prompt.fail(f"{where}.input_schema.type: Input should be 'object'")
        elif not _is_json_schema(schema):
            prompt.fail(f"{where}.input_schema: JSON schema is invalid. It must match JSON Schema draft 2020-12 "
                        "(https://json-schema.org/draft/2020-12).")
        description = tool.get("description")
        if description is not None and not isinstance(description, str):
            prompt.fail(f"{where}.description: Input should be a valid string")
        elif not description:
            # The API accepts a tool without a description; the tool-use guide says quality suffers, so
            # perfbot's clients must always describe their tools.
            house_rules.append(f"{where}: tool {name!r} has no description (house rule; the API would accept it)")
    return names


def _is_json_schema(schema: dict) -> bool:
    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError:
        return False
    return True


def _check_tool_choice(choice: Any, tool_names: set[str], thinking: Any, fail) -> None:
    if choice is None:
        return
    if not isinstance(choice, dict) or choice.get("type") not in ("auto", "any", "tool", "none"):
        return fail("tool_choice.type: Input should be 'auto', 'any', 'tool' or 'none'")
    kind = choice["type"]
    allowed_keys = {"type", "disable_parallel_tool_use"} | ({"name"} if kind == "tool" else set())
    for key in sorted(choice.keys() - allowed_keys):
        fail(f"tool_choice.{kind}.{key}: Extra inputs are not permitted")
    if kind in ("any", "tool") and not tool_names:
        return fail("tool_choice: tool_choice may only be specified while providing tools")
    if kind == "tool":
        name = choice.get("name")
        if not isinstance(name, str):
            fail("tool_choice.tool.name: Field required")
        elif name not in tool_names:
            fail(f"tool_choice.tool.name: tool '{name}' was not found in the provided tools "
                 f"({', '.join(sorted(tool_names))})")
    thinking_on = isinstance(thinking, dict) and thinking.get("type") in ("enabled", "adaptive")
    if thinking_on and kind in ("any", "tool"):
        fail("Thinking may not be enabled when tool_choice forces tool use.")


def _check_thinking(thinking: Any, max_tokens: Any, fail) -> None:
    if thinking is None:
        return
    if not isinstance(thinking, dict) or thinking.get("type") not in ("enabled", "disabled", "adaptive"):
        return fail("thinking.type: Input should be 'enabled', 'disabled' or 'adaptive'")
    if thinking["type"] == "enabled":
        budget = thinking.get("budget_tokens")
        if not isinstance(budget, int) or isinstance(budget, bool):
            return fail("thinking.enabled.budget_tokens: Field required")
        if budget < 1024:
            fail("thinking.enabled.budget_tokens: Input should be greater than or equal to 1024")
        if isinstance(max_tokens, int) and budget >= max_tokens:
            fail("`max_tokens` must be greater than `thinking.budget_tokens`")


def _check_sampling_and_misc(body: dict, fail) -> None:
    for key in ("temperature", "top_p"):
        value = body.get(key)
        if value is not None and (not isinstance(value, (int, float)) or isinstance(value,
                                                                                    bool) or not 0 <= value <= 1):
            fail(f"{key}: Input should be a number between 0 and 1")
    top_k = body.get("top_k")
    if top_k is not None and (not isinstance(top_k, int) or isinstance(top_k, bool) or top_k < 0):
        fail("top_k: Input should be a non-negative integer")
    stops = body.get("stop_sequences")
    if stops is not None and (not isinstance(stops, list) or not all(isinstance(s, str) and s.strip() for s in stops)):
        fail("stop_sequences: each stop sequence must be a string containing non-whitespace characters")
    metadata = body.get("metadata")
    if metadata is not None:
        if not isinstance(metadata, dict):
            fail("metadata: Input should be a valid dictionary")
        else:
            for key in sorted(metadata.keys() - {"user_id"}):
                fail(f"metadata.{key}: Extra inputs are not permitted")
            user_id = metadata.get("user_id")
            if user_id is not None and (not isinstance(user_id, str) or len(user_id) > 256):
                fail("metadata.user_id: Input should be a string of at most 256 characters")
    tier = body.get("service_tier")
    if tier is not None and tier not in ("auto", "standard_only"):
        fail("service_tier: Input should be 'auto' or 'standard_only'")
