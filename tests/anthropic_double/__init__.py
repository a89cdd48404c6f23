"""A local Anthropic API double for tests: a real HTTP server on 127.0.0.1 that speaks the Messages API wire
format (non-streaming), token counting and the Message Batches API, checks every request the way the API
does, and answers what the test scripted. Nothing here talks to Anthropic.

    with AnthropicDouble() as double:
        double.answer_with_tool("record_verdict", {"overlap": True, "reason": "same loop"})
        client = anthropic.Anthropic(base_url=double.url, api_key=double.api_key)
        message = client.messages.create(model="claude-sonnet-4-6", max_tokens=1024, tools=[...],
                                         tool_choice={"type": "tool", "name": "record_verdict"},
                                         messages=[{"role": "user", "content": "..."}])
        assert double.violations == []

Modules: `server` (the HTTP pipeline and `AnthropicDouble`), `controls` (scripted answers, faults, delays,
recording), `answers` (answer forms and the Message JSON), `validate` and `validate_blocks` (the API's
request rules), `prompt_cache` (token estimates and the simulated prompt cache), `batches` (Message
Batches), `errors` (error shapes and ids).
"""
from .answers import Answer, error_answer, expired_answer, facts_answer, report_line, text_answer, tool_answer
from .controls import RecordedRequest
from .server import API_VERSIONS, DEFAULT_MODELS, AnthropicDouble

__all__ = [
           "API_VERSIONS",
           "DEFAULT_MODELS",
           "Answer",
           "AnthropicDouble",
           "RecordedRequest",
           "error_answer",
           "expired_answer",
           "facts_answer",
           "report_line",
           "text_answer",
           "tool_answer",
]
