"""The agent reviewer asked for the facts of one report the offline reading left open, by a forced tool call.

Only the tool's input is used, and only after it fits FACTS_SCHEMA: an answer out of shape is sent back once
with the schema error, then given up (never acted on). Whether a fact stands on its cited line is judged
later, by bot.core.reports.agent_facts, against the report text itself.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import anthropic
import jsonschema

from bot.core.reports.agent_facts import FACTS_SCHEMA, FACTS_TOOL, missing_facts
from bot.core.reports.records import PerfIssue

# Bump when the question or the rules below change: cached answers to an older question are not reused.
FACTS_PROMPT_VERSION = "2026-12-03.1"
FACTS_MAX_TOKENS = 1024  # four facts with quotes fit in a few hundred tokens

FACTS_RULES = """Reading facts. When the linter cannot read some facts of a report, you are asked for them with the
report_facts tool; the report comes with its lines numbered as `NNNN| text`. The facts:
- track: seq (the language against its 1-to-1 C translation, one thread) or par (a parallel speedup far
  from ideal);
- backend: c, metal or cuda (what the language program ran on);
- threads: the thread (or tome) count the par claim is about, a whole number;
- ratio: seq: language time / C time; par: ideal speedup / achieved speedup (8 threads at 3.8x: 8 / 3.8).
Give a fact only when the report states it, or when it follows by arithmetic from numbers the report states.
For each fact give the line number and, in `quote`, the exact words on that line it is read from, character
for character and without the `NNNN| ` prefix; put any arithmetic in `how`. A fact the report does not give
goes in `undecidable`, saying what is missing. Never guess and never use a default: an answer whose quote is
not on the line it cites is thrown away. Call report_facts for the facts of one report."""


@dataclass(frozen=True)
class FactReading:
    """What the agent answered: `answer` fits FACTS_SCHEMA, or is None and `problem` says why."""

    asked: tuple[str, ...]
    answer: dict | None
    usage: dict[str, int] = field(default_factory=dict)
    problem: str = ""
    final: bool = True  # False: the API refused the request itself (a bad key, say); asking later may work


Send = Callable[[dict, dict], anthropic.types.Message]  # (request params, usage to add to) -> the answer


def read_facts(send: Send, model: str, system: str, record: PerfIssue, text: str) -> FactReading:
    """Ask for `missing_facts(record)` only, with the report's numbered lines; one retry if out of shape."""
    asked = missing_facts(record)
    usage: dict[str, int] = {}
    if not asked:
        return FactReading(asked, None, usage, "the offline reading found every fact")
    messages: list = [{"role": "user", "content": question(record, text, asked)}]
    problem = ""
    for _ in range(2):
        try:
            response = send(facts_params(model, system, messages), usage)
        except anthropic.APIStatusError as exc:
            return FactReading(asked, None, usage, f"the API refused the request ({exc.status_code})", final=False)
        call = next((b for b in response.content if b.type == "tool_use" and b.name == FACTS_TOOL), None)
        if call is None:
            problem = f"the reviewer answered without calling {FACTS_TOOL}"
            break
        try:
            jsonschema.validate(call.input, FACTS_SCHEMA)
        except jsonschema.ValidationError as exc:
            problem = f"the answer does not fit the schema: {exc.message}"
        else:
            return FactReading(asked, dict(call.input), usage)
        messages += [{"role": "assistant", "content": [{"type": "tool_use", "id": call.id, "name": FACTS_TOOL,
                                                        "input": call.input}]},
                     {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "is_error": True,
                                                   "content": f"Rejected: {problem}. Call {FACTS_TOOL} again."}]}]
    return FactReading(asked, None, usage, problem)


def facts_params(model: str, system: str, messages: list) -> dict:
    return {
        "model": model, "max_tokens": FACTS_MAX_TOKENS,
        # The team's rules first, the same bytes as pair reviews and audits, then the fact-reading rules:
        # the breakpoint after both caches the whole stable prefix for every fact request.
        "system": [{"type": "text", "text": system},
                   {"type": "text", "text": FACTS_RULES, "cache_control": {"type": "ephemeral"}}],
        "tools": [{"name": FACTS_TOOL, "description": "Report the facts of one report, each with its line and "
                                                      "the exact words it is read from.",
                   "input_schema": FACTS_SCHEMA}],
        "tool_choice": {"type": "tool", "name": FACTS_TOOL},
        "messages": messages,
    }


def question(record: PerfIssue, text: str, asked: tuple[str, ...]) -> str:
    lines = text.replace("\r\n", "\n").split("\n")
    numbered = "\n".join(f"{n:>4}| {line}" for n, line in enumerate(lines, 1))
    return (f"The linter could not read these facts of report `{record.slug}`: {', '.join(asked)}. Read them from "
            f"the report, or say why it does not give them.\n<report>\n{numbered}\n</report>")
