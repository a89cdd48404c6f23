"""Scripted answers: what the double says in place of a model, and how it becomes a Messages API response.

The double never thinks. A test queues answers (`answer_with_tool`, `answer_with_text`, `answer_with_error`,
`answer_with(facts_answer(...))` for perfbot's `report_facts`, citing lines found with `report_line`) or
sets `double.responder`, a callable that gets the request body and returns one of:
- an `Answer` (built with `tool_answer`, `text_answer`, `error_answer`, `expired_answer`);
- a `str`: a text answer;
- a dict with "content" (and optionally "stop_reason", "usage"): a message with those content blocks;
- any other dict: the `input` of a tool call to the tool the request forces (`tool_choice` of type
  "tool"), or to its only tool. This is the short form for verdict tests: `lambda body: {"overlap": False}`;
- None: no answer (the request is answered as a bug in the test script, see `AnthropicDouble`).

Tool inputs are sent as given, even when they do not match the tool's `input_schema`: catching malformed
model output is the client's job. What a real model cannot do (call a tool other than the forced one, call
a tool that was not offered, call any tool under `tool_choice: none`) is reported as a script error.
"""
from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from .errors import ApiError, error_type_for, new_id
from .prompt_cache import estimate_tokens

NUMBERED_LINE = re.compile(r"^ *(\d+)\| ?(.*)$", re.MULTILINE)


@dataclass
class Answer:
    """One scripted answer: a message (content blocks), an API error, or a batch-only outcome."""

    content: list[dict] = field(default_factory=list)
    stop_reason: str | None = None  # None: "tool_use" if a tool is called, else "end_turn"
    usage: dict[str, Any] = field(default_factory=dict)  # overrides the usage the double computes
    error: ApiError | None = None
    batch_outcome: str | None = None  # "expired" or "canceled": only meaningful inside a batch


def tool_answer(name: str, input: Any, *, usage: dict | None = None, text: str | None = None,
                stop_reason: str | None = None) -> Answer:
    """A `tool_use` answer; `text` adds the short preamble models sometimes write before the call."""
    content = ([{"type": "text", "text": text}] if text else []) + [{"type": "tool_use", "name": name, "input": input}]
    return Answer(content, stop_reason, dict(usage or {}))


def facts_answer(*facts: dict, undecidable: tuple[str, ...] = (), usage: dict | None = None) -> Answer:
    """perfbot's `report_facts` call: each fact a dict with fact, value, line, quote (and optionally how)."""
    data: dict[str, Any] = {"facts": [dict(fact) for fact in facts]}
    if undecidable:
        data["undecidable"] = list(undecidable)
    return tool_answer("report_facts", data, usage=usage)


def report_line(request: dict, words: str) -> int:
    """The number of the first report line a fact question shows (`NNNN| text`) that holds `words`.

    Lets a responder cite lines as a model reading the numbered report would, without counting by hand."""
    question = next((m.get("content") for m in request.get("messages") or [] if m.get("role") == "user"), "")
    for number, text in NUMBERED_LINE.findall(question if isinstance(question, str) else ""):
        if words in text:
            return int(number)
    raise ValueError(f"no numbered report line holds {words!r}")


def text_answer(text: str, *, usage: dict | None = None, stop_reason: str | None = None) -> Answer:
    return Answer([{"type": "text", "text": text}], stop_reason, dict(usage or {}))


def error_answer(status: int = 500, error_type: str | None = None, message: str | None = None,
                 headers: dict[str, str] | None = None) -> Answer:
    """An API error in place of a message (in a batch: an `errored` result)."""
    error_type = error_type or error_type_for(status)
    return Answer(error=ApiError(status, message or f"scripted {error_type}", error_type, dict(headers or {})))


def expired_answer() -> Answer:
    """A batch request that expired before it was processed (`{"type": "expired"}` in the results)."""
    return Answer(batch_outcome="expired")


def forced_tool(request: dict) -> str | None:
    """The tool a request makes the model call: the one `tool_choice` names, else its only tool."""
    choice = request.get("tool_choice") or {}
    if choice.get("type") == "tool":
        return choice.get("name")
    tools = request.get("tools") or []
    return tools[0].get("name") if len(tools) == 1 and choice.get("type") != "none" else None


def coerce_answer(value: Any, request: dict) -> Answer | None:
    """Turn what a responder returned into an `Answer` (see the module docstring for the forms)."""
    if value is None or isinstance(value, Answer):
        return value
    if isinstance(value, str):
        return text_answer(value)
    if isinstance(value, dict) and "content" in value:
        return Answer(list(value["content"]), value.get("stop_reason"), dict(value.get("usage") or {}))
    if isinstance(value, dict):
        name = forced_tool(request)
        if name is None:
            raise ValueError("the responder returned a tool input, but the request forces no tool and offers "
                             "more than one: return tool_answer(name, input) instead")
        return tool_answer(name, value)
    raise TypeError(f"a responder must return an Answer, str, dict or None, not {type(value).__name__}")


def script_problems(answer: Answer, request: dict) -> list[str]:
    """What a real model could not have answered to this request."""
    problems = []
    offered = {tool.get("name") for tool in request.get("tools") or [] if isinstance(tool, dict)}
    choice = request.get("tool_choice") or {}
    called = [block.get("name") for block in answer.content if block.get("type") == "tool_use"]
    for name in called:
        if name not in offered:
            problems.append(f"the scripted answer calls tool {name!r}, which the request does not offer")
        elif choice.get("type") == "tool" and name != choice.get("name"):
            problems.append(f"the scripted answer calls {name!r}, but tool_choice forces {choice.get('name')!r}")
    if called and choice.get("type") == "none":
        problems.append("the scripted answer calls a tool, but tool_choice is 'none'")
    if not called and choice.get("type") in ("any", "tool") and answer.stop_reason != "max_tokens":
        problems.append(f"tool_choice {choice.get('type')!r} forces a tool call, but the scripted answer has none")
    return problems


def output_tokens(content: list[dict]) -> int:
    total = 0
    for block in content:
        if block.get("type") == "text":
            total += estimate_tokens(block.get("text", ""))
        else:  # a tool call costs its JSON input plus the call's own framing
            total += estimate_tokens(json.dumps(block.get("input"), separators=(",", ":"))) + 10
    return max(total, 1)


def render_message(answer: Answer, request: dict, input_usage: dict, *, service_tier: str = "standard") -> dict:
    """The `Message` JSON for an answer: ids filled in, stop_reason and usage computed unless scripted."""
    content = []
    for block in answer.content:
        block = dict(block)
        if block.get("type") == "tool_use":
            block.setdefault("id", new_id("toolu"))
        content.append(block)
    max_tokens = request.get("max_tokens") or 0
    produced = output_tokens(content) if content else 0
    stop_reason = answer.stop_reason
    if max_tokens == 0:  # cache pre-warming: nothing is generated
        content, produced, stop_reason = [], 0, "max_tokens"
    elif produced > max_tokens and stop_reason is None:
        # the model would have been cut off; the client must notice stop_reason, whatever the content says
        produced, stop_reason = max_tokens, "max_tokens"
    if stop_reason is None:
        stop_reason = "tool_use" if any(block.get("type") == "tool_use" for block in content) else "end_turn"
    usage = {**input_usage, "output_tokens": produced, "service_tier": service_tier}
    usage.update(answer.usage)
    return {"id": new_id("msg"), "type": "message", "role": "assistant", "model": request.get("model"),
            "content": content, "stop_reason": stop_reason, "stop_sequence": None, "usage": usage}
