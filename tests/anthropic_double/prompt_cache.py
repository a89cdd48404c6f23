"""Token estimates and a simulated prompt cache, so clients can test their `cache_control` placement.

Tokens are estimated, not counted with Claude's tokenizer: about four characters a token, plus a fixed
tool-use system prompt when tools are given. The same input always gives the same count, and longer input
gives more, which is all a client's tests can rely on anyway.

The cache follows the documented rules closely enough to catch the mistakes that matter:
- the prompt is a sequence of blocks in the order tools -> system -> messages; a `cache_control` breakpoint
  caches the prefix up to and including its block (top-level `cache_control` marks the last block);
- a prefix shorter than the model's minimum cacheable length is silently not cached (no error, no
  `cache_creation_input_tokens`), as on the real API;
- a later request reads the longest cached prefix found at one of its breakpoints or up to 20 blocks
  before one (the API's lookback), and writes the prefixes at its breakpoints past that;
- entries live 5 minutes or 1 hour (`ttl`), refreshed on every read; the clock can be advanced by tests;
- the key is the model and the exact blocks; changing `tool_choice` or any tool invalidates everything,
  because the tool-use system prompt and the tools come first.
"""
from __future__ import annotations

import hashlib
import json
import math
import threading
import time
from dataclasses import dataclass, field
from typing import Any

TOOL_SYSTEM_PROMPT_TOKENS = 300  # the API prepends a tool-use system prompt of a few hundred tokens
MESSAGE_OVERHEAD_TOKENS = 3  # role markers around each message
LOOKBACK_BLOCKS = 20
TTL_SECONDS = {"5m": 300.0, "1h": 3600.0}


def estimate_tokens(text: str) -> int:
    return max(1, math.ceil(len(text) / 4))


def canonical(value: Any) -> str:
    """Stable JSON for hashing and estimating; `cache_control` is no part of the content it marks."""
    if isinstance(value, dict):
        value = {key: item for key, item in value.items() if key != "cache_control"}
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


@dataclass(frozen=True)
class Block:
    """One cacheable unit of the prompt: a tool, a system block or a message content block."""

    tokens: int
    piece: str  # what identifies the block in a prefix (canonical JSON, with its place in the prompt)
    ttl: str | None  # the block's cache_control ttl, None when it is no breakpoint


def _ttl(block: Any) -> str | None:
    control = block.get("cache_control") if isinstance(block, dict) else None
    return control.get("ttl", "5m") if isinstance(control, dict) else None


def prompt_blocks(body: dict) -> list[Block]:
    """The request's prompt as blocks, in the order the API processes (and caches) them.

    Call only on a request that passed validation: shapes are assumed, not checked."""
    blocks: list[Block] = []
    tools = body.get("tools") or []
    if tools:
        choice = (body.get("tool_choice") or {}).get("type", "auto")
        blocks.append(Block(TOOL_SYSTEM_PROMPT_TOKENS, f"tool-prompt:{choice}", None))
    for tool in tools:
        text = canonical(tool)
        blocks.append(Block(estimate_tokens(text), "tool:" + text, _ttl(tool)))
    system = body.get("system")
    if isinstance(system, str):
        system = [{"type": "text", "text": system}] if system else []
    for block in system or []:
        blocks.append(Block(estimate_tokens(block.get("text", "")), "system:" + canonical(block), _ttl(block)))
    for message in body.get("messages") or []:
        content = message.get("content")
        if isinstance(content, str):
            content = [{"type": "text", "text": content}]
        for index, block in enumerate(content or []):
            text = block.get("text") if block.get("type") == "text" else canonical(block)
            overhead = MESSAGE_OVERHEAD_TOKENS if index == 0 else 0
            piece = f"{message.get('role')}:{index}:{canonical(block)}"
            blocks.append(Block(estimate_tokens(text or "") + overhead, piece, _ttl(block)))
    top_level = body.get("cache_control")
    if isinstance(top_level, dict) and blocks:  # automatic caching: a breakpoint on the last block
        last = blocks[-1]
        blocks[-1] = Block(last.tokens, last.piece, last.ttl or top_level.get("ttl", "5m"))
    return blocks


def count_input_tokens(body: dict) -> int:
    return sum(block.tokens for block in prompt_blocks(body))


@dataclass
class CachePlan:
    """What one request reads from and would write to the cache; `usage` holds the four token fields."""

    usage: dict[str, Any]
    writes: list[tuple[bytes, float]] = field(default_factory=list)  # (prefix digest, ttl seconds)
    refreshes: list[tuple[bytes, float]] = field(default_factory=list)


class PromptCache:
    """Cached prompt prefixes by digest, with expiry on a clock that tests can move forward."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._expiry: dict[bytes, float] = {}
        self._offset = 0.0

    def now(self) -> float:
        return time.monotonic() + self._offset

    def advance(self, seconds: float) -> None:
        """Move the cache's clock forward, e.g. past a 5-minute TTL, without waiting."""
        with self._lock:
            self._offset += seconds

    def clear(self) -> None:
        with self._lock:
            self._expiry.clear()

    def plan(self, model: str, blocks: list[Block], min_cacheable_tokens: int) -> CachePlan:
        digests, cumulative = [], []
        running, total = hashlib.sha256(model.encode()), 0
        for block in blocks:
            running.update(block.piece.encode() + b"\x00")
            digests.append(running.digest())
            total += block.tokens
            cumulative.append(total)
        breakpoints = [index for index, block in enumerate(blocks) if block.ttl]
        now, hit = self.now(), -1
        with self._lock:
            for breakpoint in breakpoints:
                for index in range(breakpoint, max(breakpoint - LOOKBACK_BLOCKS, -1), -1):
                    if self._expiry.get(digests[index], 0.0) > now:
                        hit = max(hit, index)
                        break
        plan = CachePlan({})
        created = {"5m": 0, "1h": 0}
        covered = hit
        for breakpoint in breakpoints:
            ttl = TTL_SECONDS[blocks[breakpoint].ttl]
            if breakpoint <= hit:
                plan.refreshes.append((digests[breakpoint], ttl))
            elif cumulative[breakpoint] >= min_cacheable_tokens:  # shorter prefixes are silently not cached
                created[blocks[breakpoint].ttl] += cumulative[breakpoint] - (cumulative[covered] if covered >= 0 else 0)
                covered = breakpoint
                plan.writes.append((digests[breakpoint], ttl))
        if hit >= 0:
            plan.refreshes.append((digests[hit], TTL_SECONDS["5m"]))
        read = cumulative[hit] if hit >= 0 else 0
        creation = created["5m"] + created["1h"]
        plan.usage = {
            "input_tokens": total - read - creation,
            "cache_creation_input_tokens": creation,
            "cache_read_input_tokens": read,
            "cache_creation": {"ephemeral_5m_input_tokens": created["5m"], "ephemeral_1h_input_tokens": created["1h"]},
        }
        return plan

    def commit(self, plan: CachePlan) -> None:
        """Store the plan's writes and refresh what it read; only for requests that were answered."""
        now = self.now()
        with self._lock:
            for digest, ttl in plan.writes + plan.refreshes:
                self._expiry[digest] = max(self._expiry.get(digest, 0.0), now + ttl)
