"""Checks of the prompt's content: messages, their content blocks, the system prompt and `cache_control`.

Messages follow the API's rules and wording ("messages.1.content.0: ..."): known block types per role,
non-empty text, every `tool_use` answered by a `tool_result` in the next message and every `tool_result`
answering a `tool_use` of the previous one, tool results before other content, no trailing whitespace at
the end of a final assistant turn, and the changes of API version 2026-10-21 (no `document` block in an
assistant turn, no `citations` on user text). Consecutive turns of one role are an error when the double is
strict (its default); the current API merges them, which hides a client that dropped a turn.
"""
from __future__ import annotations

from typing import Any

from .errors import ApiError, invalid

VERSION_2026 = "2026-10-21"
BLOCK_KEYS = {
    "text": {"type", "text", "cache_control", "citations"},
    "image": {"type", "source", "cache_control"},
    "document": {"type", "source", "cache_control", "citations", "context", "title"},
    "search_result": {"type", "source", "title", "content", "cache_control", "citations"},
    "tool_result": {"type", "tool_use_id", "content", "is_error", "cache_control", "toolset_name"},
    "tool_use": {"type", "id", "name", "input", "cache_control", "caller", "toolset_name"},
    "thinking": {"type", "thinking", "signature"},
    "redacted_thinking": {"type", "data"},
}
USER_TYPES = {"text", "image", "document", "search_result", "tool_result", "container_upload"}
ASSISTANT_TYPES = {"text", "tool_use", "thinking", "redacted_thinking", "server_tool_use", "document"}
TOOL_RESULT_CONTENT_TYPES = {"text", "image", "document", "search_result", "tool_reference"}


class PromptChecker:
    """Collects problems (first one answers the request) and the `cache_control` markers, in prompt order."""

    def __init__(self, version: str, strict_alternation: bool) -> None:
        self.version = version
        self.strict_alternation = strict_alternation
        self.problems: list[ApiError] = []
        self.cache_ttls: list[str] = []  # one entry per cache_control marker found, in processing order

    def fail(self, message: str) -> None:
        self.problems.append(invalid(message))

    # -- cache_control ---------------------------------------------------------------------------------
    def cache_control(self, where: str, control: Any) -> None:
        if control is None:
            return
        if not isinstance(control, dict):
            return self.fail(f"{where}.cache_control: Input should be a valid dictionary")
        if control.get("type") != "ephemeral":
            return self.fail(f"{where}.cache_control.type: Input should be 'ephemeral'")
        for key in control.keys() - {"type", "ttl"}:
            self.fail(f"{where}.cache_control.{key}: Extra inputs are not permitted")
        ttl = control.get("ttl", "5m")
        if ttl not in ("5m", "1h"):
            return self.fail(f"{where}.cache_control.ttl: Input should be '5m' or '1h'")
        self.cache_ttls.append(ttl)

    # -- content blocks --------------------------------------------------------------------------------
    def text_block(self, where: str, block: dict, scope: str) -> None:
        text = block.get("text")
        if not isinstance(text, str):
            return self.fail(f"{where}.text: Field required" if text is None else f"{where}.text: Input should be a "
                                                                                  "valid string")
        if not text:
            self.fail(f"{scope}: text content blocks must be non-empty")
        elif not text.strip():
            self.fail(f"{scope}: text content blocks must contain non-whitespace text")
        if block.get("cache_control") is not None and not text:
            self.fail(f"{where}: cache_control cannot be set for empty text blocks")

    def block(self, where: str, block: Any, role: str) -> None:
        if not isinstance(block, dict):
            return self.fail(f"{where}: Input should be a valid dictionary or object to extract fields from")
        kind = block.get("type")
        allowed = USER_TYPES if role == "user" else ASSISTANT_TYPES if role == "assistant" else {"text"}
        if kind not in allowed and not (role == "assistant" and str(kind).endswith("_tool_result")):
            return self.fail(f"{where}.type: Input tag '{kind}' found using 'type' does not match any of the "
                             f"expected tags: {', '.join(repr(t) for t in sorted(allowed))}")
        for key in sorted(block.keys() - BLOCK_KEYS.get(kind, block.keys())):
            self.fail(f"{where}.{kind}.{key}: Extra inputs are not permitted")
        self.cache_control(where, block.get("cache_control"))
        if kind == "text":
            self.text_block(where, block, "messages" if role != "system" else "system")
            if role == "user" and block.get("citations") and self.version >= VERSION_2026:
                self.fail(f"{where}.citations: text blocks in user messages cannot carry citations in API "
                          f"version {self.version}")
        elif kind == "document" and role == "assistant" and self.version >= VERSION_2026:
            self.fail(f"{where}: document blocks are not allowed in assistant messages in API version {self.version}")
        elif kind == "tool_use":
            if not isinstance(block.get("id"), str) or not block["id"]:
                self.fail(f"{where}.tool_use.id: Field required")
            if not isinstance(block.get("name"), str) or not block["name"]:
                self.fail(f"{where}.tool_use.name: Field required")
            if not isinstance(block.get("input"), dict):
                self.fail(f"{where}.tool_use.input: Input should be a valid dictionary")
        elif kind == "tool_result":
            if not isinstance(block.get("tool_use_id"), str):
                self.fail(f"{where}.tool_result.tool_use_id: Field required")
            content = block.get("content")
            if isinstance(content, list):
                for index, inner in enumerate(content):
                    inner_where = f"{where}.content.{index}"
                    if not isinstance(inner, dict) or inner.get("type") not in TOOL_RESULT_CONTENT_TYPES:
                        self.fail(f"{inner_where}.type: Input tag "
                                  f"'{inner.get('type') if isinstance(inner, dict) else inner}'"
                                  " does not match any of the expected tags")
                    elif inner["type"] == "text":
                        self.text_block(inner_where, inner, "messages")
                        self.cache_control(inner_where, inner.get("cache_control"))
            elif content is not None and not isinstance(content, str):
                self.fail(f"{where}.tool_result.content: Input should be a valid string or list")
            if "is_error" in block and not isinstance(block["is_error"], bool):
                self.fail(f"{where}.tool_result.is_error: Input should be a valid boolean")

    # -- system ----------------------------------------------------------------------------------------
    def system(self, system: Any, where: str = "system") -> None:
        if system is None or isinstance(system, str):
            return  # an empty string is accepted and means no system prompt
        if not isinstance(system, list):
            return self.fail(f"{where}: Input should be a valid string or a list of text blocks")
        for index, block in enumerate(system):
            block_where = f"{where}.{index}"
            if not isinstance(block, dict) or block.get("type") != "text":
                found = block.get("type") if isinstance(block, dict) else type(block).__name__
                self.fail(f"{block_where}.type: Input should be 'text' "
                          f"(system blocks are text blocks, found {found!r})")
                continue
            for key in sorted(block.keys() - BLOCK_KEYS["text"]):
                self.fail(f"{block_where}.{key}: Extra inputs are not permitted")
            self.cache_control(block_where, block.get("cache_control"))
            self.text_block(block_where, block, "system")

    # -- messages --------------------------------------------------------------------------------------
    def messages(self, messages: Any) -> None:
        if not isinstance(messages, list):
            return self.fail("messages: Input should be a valid list")
        if not messages:
            return self.fail("messages: at least one message is required")
        previous_role, pending_tool_uses = None, None
        for position, message in enumerate(messages):
            where = f"messages.{position}"
            if not isinstance(message, dict):
                self.fail(f"{where}: Input should be a valid dictionary")
                continue
            role, content = message.get("role"), message.get("content")
            for key in sorted(message.keys() - {"role", "content"}):
                self.fail(f"{where}.{key}: Extra inputs are not permitted")
            if role not in ("user", "assistant", "system"):
                self.fail(f"{where}.role: Input should be 'user', 'assistant' or 'system'" if role is not None
                          else f"{where}.role: Field required")
                continue
            if role == "system":
                self.system(content, f"{where}.content")
                continue
            if self.strict_alternation and role == previous_role:
                self.fail(f'messages: roles must alternate between "user" and "assistant", but found multiple '
                          f'"{role}" roles in a row')
            is_final_assistant = role == "assistant" and position == len(messages) - 1
            blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
            if not isinstance(blocks, list):
                self.fail(f"{where}.content: Input should be a valid string or list of content blocks")
                continue
            if not blocks or (isinstance(content, str) and not content):
                if not is_final_assistant:
                    self.fail(f"{where}: all messages must have non-empty content except for the optional final "
                              "assistant message")
                pending_tool_uses = self._pair_tools(where, role, [], pending_tool_uses)
                previous_role = role
                continue
            if isinstance(content, list):
                for index, block in enumerate(blocks):
                    self.block(f"{where}.content.{index}", block, role)
            if is_final_assistant:
                last = blocks[-1]
                last_text = last.get("text", "") if isinstance(last, dict) else ""
                if isinstance(last, dict) and last.get("type") == "text" and str(last_text).rstrip() != last_text:
                    self.fail("messages: final assistant content cannot end with trailing whitespace")
            pending_tool_uses = self._pair_tools(where, role, blocks, pending_tool_uses)
            previous_role = role
        if pending_tool_uses:
            self.fail(f"messages.{len(messages) - 1}: `tool_use` ids were found without `tool_result` blocks "
                      f"immediately after: {', '.join(pending_tool_uses)}. Each `tool_use` block must have a "
                      "corresponding `tool_result` block in the next message.")

    def _pair_tools(self, where: str, role: str, blocks: list, pending: list[str] | None) -> list[str] | None:
        """Match tool_result blocks to the previous turn's tool_use ids; returns this turn's open tool uses."""
        kinds = [block.get("type") if isinstance(block, dict) else None for block in blocks]
        if role == "user":
            results = [block.get("tool_use_id") for block in blocks if isinstance(block, dict)
                       and block.get("type") == "tool_result"]
            for index, tool_use_id in enumerate(results):
                if tool_use_id not in (pending or []):
                    self.fail(f"{where}.content.{index}: unexpected `tool_use_id` found in `tool_result` blocks: "
                              f"{tool_use_id}. Each `tool_result` block must have a corresponding `tool_use` block "
                              "in the previous message.")
            missing = [tool_use_id for tool_use_id in (pending or []) if tool_use_id not in results]
            if missing:
                self.fail(f"{where}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                          f"{', '.join(missing)}. Each `tool_use` block must have a corresponding `tool_result` "
                          "block in the next message.")
            result_positions = [i for i, kind in enumerate(kinds) if kind == "tool_result"]
            other_positions = [i for i, kind in enumerate(kinds) if kind != "tool_result"]
            if result_positions and other_positions and min(other_positions) < max(result_positions):
                self.fail(f"{where}: tool_result blocks must come before any other content in a user message")
            return None
        if pending:
            self.fail(f"{where}: `tool_use` ids were found without `tool_result` blocks immediately after: "
                      f"{', '.join(pending)}. Each `tool_use` block must have a corresponding `tool_result` block in "
                      "the next message.")
        return [block.get("id") for block in blocks if isinstance(block,
                                                                  dict) and block.get("type") == "tool_use"] or None
