"""The Anthropic double, driven the way perfbot will drive Claude: the real `anthropic` SDK over real sockets.

perfbot asks Claude whether two performance reports overlap: a forced tool call whose input is the verdict,
a cached rubric as system prompt, and the Message Batches API for backlogs. These tests show the double
answers that traffic like the API (shapes, usage, caching, errors the SDK retries or raises) and refuses
what the API refuses. The `anthropic_api` fixture fails any test that leaves violations behind, so every
test that does not take them proves a correct client produces none.
"""
from __future__ import annotations

import json
import time

import pytest

anthropic = pytest.importorskip("anthropic", reason="the anthropic SDK is needed to drive the Anthropic double")

from tests.anthropic_double import AnthropicDouble, error_answer, expired_answer, tool_answer  # noqa: E402
from tests.anthropic_fixtures import anthropic_api  # noqa: E402,F401  (the fixture under test)

MODEL = "claude-sonnet-4-6"
VERDICT_TOOL = {
    "name": "record_verdict",
    "description": "Record whether two performance reports describe the same underlying problem.",
    "input_schema": {"type": "object", "required": ["overlap", "reason"], "properties": {
        "overlap": {"type": "boolean"}, "reason": {"type": "string"}}},
}
FORCE_VERDICT = {"type": "tool", "name": "record_verdict"}
# The stable prefix: long enough (about 1,300 estimated tokens) to pass the 1,024-token caching minimum.
RUBRIC = ("Two reports overlap when the same runtime mechanism explains both slowdowns, even if the programs "
          "differ. Reports on different backends or thread counts can still overlap. " * 50)
CACHED_SYSTEM = [{"type": "text", "text": RUBRIC, "cache_control": {"type": "ephemeral"}}]


@pytest.fixture
def double(anthropic_api):
    return anthropic_api


def client(double: AnthropicDouble, **options) -> anthropic.Anthropic:
    options.setdefault("max_retries", 0)
    return anthropic.Anthropic(base_url=double.url, api_key=double.api_key, **options)


def ask_verdict(sdk: anthropic.Anthropic, pair: str, **overrides):
    request = dict(model=MODEL, max_tokens=1024, system=CACHED_SYSTEM, tools=[VERDICT_TOOL],
                   tool_choice=FORCE_VERDICT, messages=[{"role": "user", "content": pair}])
    return sdk.messages.create(**{**request, **overrides})


# -- the Messages API ----------------------------------------------------------------------------------------
def test_forced_tool_call_reads_the_cached_system_prompt_the_second_time(double):
    sdk = client(double)
    double.answer_with_tool("record_verdict", {"overlap": True, "reason": "both box u24 values"})
    double.answer_with_tool("record_verdict", {"overlap": False, "reason": "different mechanisms"})

    first = ask_verdict(sdk, "perf_u24_mul_slow vs perf_u24_arith_boxing")
    second = ask_verdict(sdk, "perf_u24_mul_slow vs perf_par_spawn")

    block = first.content[0]
    assert (first.type, first.role, first.model, first.stop_reason) == ("message", "assistant", MODEL, "tool_use")
    assert (block.type, block.name, block.input) == ("tool_use", "record_verdict",
                                                     {"overlap": True, "reason": "both box u24 values"})
    assert block.id.startswith("toolu_") and first.id.startswith("msg_")
    assert first.usage.cache_creation_input_tokens > 1024 and first.usage.cache_read_input_tokens == 0
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens
    assert second.usage.cache_creation_input_tokens == 0 and second.usage.input_tokens > 0
    assert second.content[0].input["overlap"] is False

    sent = double.requests_to("/v1/messages")
    assert len(sent) == 2 and sent[0].json["tool_choice"] == FORCE_VERDICT
    assert sent[0].header("anthropic-version") in double.api_versions
    assert sent[0].header("x-api-key") or sent[0].header("authorization") == f"Bearer {double.api_key}"
    assert sent[0].header("request-id") is None and sent[0].header("x-stainless-retry-count") == "0"


def test_cache_rules_minimum_length_ttl_and_automatic_caching(double):
    sdk = client(double)
    double.responder = lambda body: {"overlap": False, "reason": "n/a"}
    short = [{"type": "text", "text": "Judge overlap.", "cache_control": {"type": "ephemeral"}}]
    for _ in range(2):  # under the minimum cacheable length: silently not cached, as on the API
        usage = ask_verdict(sdk, "a vs b", system=short).usage
        assert usage.cache_creation_input_tokens == usage.cache_read_input_tokens == 0

    assert ask_verdict(sdk, "a vs b").usage.cache_creation_input_tokens > 0
    double.advance_cache_clock(301)  # past the default 5-minute TTL
    assert ask_verdict(sdk, "a vs b").usage.cache_read_input_tokens == 0

    double.clear_prompt_cache()
    hour = [{**CACHED_SYSTEM[0], "cache_control": {"type": "ephemeral", "ttl": "1h"}}]
    created = ask_verdict(sdk, "a vs b", system=hour).usage
    assert created.cache_creation.ephemeral_1h_input_tokens == created.cache_creation_input_tokens > 0
    double.advance_cache_clock(301)
    assert ask_verdict(sdk, "c vs d", system=hour).usage.cache_read_input_tokens == created.cache_creation_input_tokens

    # top-level cache_control caches the whole conversation; the next turn reads it back (the API's lookback)
    turns = [{"role": "user", "content": RUBRIC}]
    double.responder = None
    double.answer_with_text("They overlap.")
    double.answer_with_text("Yes.")
    first = sdk.messages.create(model=MODEL, max_tokens=256, messages=turns, cache_control={"type": "ephemeral"})
    turns += [{"role": "assistant", "content": "They overlap."}, {"role": "user", "content": "Sure?"}]
    second = sdk.messages.create(model=MODEL, max_tokens=256, messages=turns, cache_control={"type": "ephemeral"})
    assert second.usage.cache_read_input_tokens == first.usage.cache_creation_input_tokens > 0


def test_text_answers_multi_turn_tool_results_and_cache_prewarming(double):
    sdk = client(double)
    double.answer_with_tool("record_verdict", {"overlap": True, "reason": "same"}, text="Let me record it.")
    double.answer_with_text("Recorded.", usage={"output_tokens": 3})
    tools = [VERDICT_TOOL]
    messages = [{"role": "user", "content": "a vs b"}]
    first = sdk.messages.create(model=MODEL, max_tokens=512, tools=tools, messages=messages)
    assert [block.type for block in first.content] == ["text", "tool_use"] and first.stop_reason == "tool_use"
    messages += [{"role": "assistant", "content": [block.model_dump(exclude_none=True) for block in first.content]},
                 {"role": "user", "content": [{"type": "tool_result", "tool_use_id": first.content[1].id,
                                               "content": "stored"}]}]
    second = sdk.messages.create(model=MODEL, max_tokens=512, tools=tools, messages=messages, stream=False)
    assert (second.content[0].text, second.stop_reason, second.usage.output_tokens) == ("Recorded.", "end_turn", 3)
    assert double.requests[-1].json["stream"] is False

    warm = ask_verdict(sdk, "x", max_tokens=0)  # max_tokens 0 pre-warms the cache and uses no scripted answer
    assert (warm.content, warm.stop_reason, warm.usage.output_tokens) == ([], "max_tokens", 0)
    assert warm.usage.cache_creation_input_tokens > 0


def test_malformed_tool_input_and_scripted_errors_reach_the_client_as_scripted(double):
    double.answer_with_tool("record_verdict", {"overlap": "perhaps"})  # violates the schema: the client's problem
    message = ask_verdict(client(double), "a vs b")
    assert message.content[0].input == {"overlap": "perhaps"}

    double.answer_with_error(400, message="prompt is too long: 210000 tokens > 200000 maximum")
    with pytest.raises(anthropic.BadRequestError, match="prompt is too long"):
        ask_verdict(client(double), "a vs b")  # a scripted refusal is no violation: the fixture checks that


def test_count_tokens_grows_with_the_prompt_and_refuses_max_tokens(double):
    sdk = client(double)
    small = sdk.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "a vs b"}])
    large = sdk.messages.count_tokens(model=MODEL, system=CACHED_SYSTEM, tools=[VERDICT_TOOL],
                                      tool_choice=FORCE_VERDICT, messages=[{"role": "user", "content": "a vs b"}])
    assert 0 < small.input_tokens < large.input_tokens
    with pytest.raises(anthropic.BadRequestError, match="max_tokens: Extra inputs are not permitted"):
        sdk.messages.count_tokens(model=MODEL, messages=[{"role": "user", "content": "a"}],
                                  extra_body={"max_tokens": 10})
    assert len(double.take_violations()) == 1


# -- failures the SDK handles: retries, Retry-After, timeouts ---------------------------------------------------
def test_sdk_retries_overloaded_and_server_errors(double):
    double.fail_next(529, "overloaded_error")
    double.fail_next(500)
    double.answer_with_tool("record_verdict", {"overlap": True, "reason": "r"})
    message = ask_verdict(client(double, max_retries=2), "a vs b")
    assert message.content[0].input["overlap"] is True
    sent = double.requests_to("/v1/messages")
    assert [r.status for r in sent] == [529, 500, 200]
    assert [r.header("x-stainless-retry-count") for r in sent] == ["0", "1", "2"]

    double.fail_next(529, count=2)
    with pytest.raises(anthropic.OverloadedError) as raised:  # retries exhausted: the typed error surfaces
        ask_verdict(client(double, max_retries=1), "a vs b")
    assert raised.value.body["error"]["type"] == "overloaded_error"
    assert raised.value.request_id.startswith("req_") and len(double.requests_to("/v1/messages")) == 5


def test_sdk_honours_retry_after_on_429(double):
    double.rate_limit_next(retry_after=1)
    double.answer_with_tool("record_verdict", {"overlap": False, "reason": "r"})
    ask_verdict(client(double, max_retries=2), "a vs b")
    limited, answered = double.requests_to("/v1/messages")
    assert (limited.status, answered.status) == (429, 200)
    # without Retry-After the SDK's first backoff is at most 0.5 s; it waited the full second the API asked
    assert answered.received_at - limited.received_at >= 0.95

    double.rate_limit_next(retry_after=30)
    with pytest.raises(anthropic.RateLimitError) as raised:
        ask_verdict(client(double), "a vs b")
    assert raised.value.response.headers["retry-after"] == "30"
    assert raised.value.response.headers["anthropic-ratelimit-requests-remaining"] == "0"


def test_slow_answer_trips_the_sdk_timeout_and_the_retry_gets_the_answer(double):
    double.delay_next(5.0)
    double.answer_with_tool("record_verdict", {"overlap": True, "reason": "r"})
    started = time.monotonic()
    with pytest.raises(anthropic.APITimeoutError):
        ask_verdict(client(double, timeout=0.2), "a vs b")
    assert time.monotonic() - started < 4.0  # gave up at its 0.2 s timeout, before the 5 s answer (a busy machine adds)
    assert double.pending_answers() == 1  # the request that timed out took no answer

    double.delay_next(0.6)
    message = ask_verdict(client(double, timeout=0.2, max_retries=1), "a vs b")  # SDK retries timeouts
    assert message.content[0].input["overlap"] is True
    deadline = time.monotonic() + 6
    while time.monotonic() < deadline and [r.status for r in double.requests] != [499, 499, 200]:
        time.sleep(0.05)  # the delayed requests finish after the client gave up on them
    assert [r.status for r in double.requests] == [499, 499, 200]


# -- what the API refuses -------------------------------------------------------------------------------------
def _five_cache_markers(request):
    marked = {"type": "text", "text": "x", "cache_control": {"type": "ephemeral"}}
    return {**request, "system": [marked] * 3, "messages": [{"role": "user", "content": [marked, marked]}]}


REFUSED = [  # (how to break a correct request, SDK error, what the API says)
    (lambda r: {**r, "tool_choice": {"type": "tool", "name": "record_verdit"}}, anthropic.BadRequestError,
     "tool 'record_verdit' was not found"),
    (lambda r: {**r, "model": "claude-imaginary-9"}, anthropic.NotFoundError, "model: claude-imaginary-9"),
    (lambda r: {**r, "max_tokens": -1}, anthropic.BadRequestError, "max_tokens: Input should be greater"),
    # an explicit timeout: without one the SDK itself refuses non-streaming calls over ~21k max_tokens
    (lambda r: {**r, "max_tokens": 10**6, "timeout": 30}, anthropic.BadRequestError,
     "maximum allowed number of output tokens"),
    (lambda r: {**r, "messages": [{"role": "user", "content": "a"}, {"role": "user", "content": "b"}]},
     anthropic.BadRequestError, "roles must alternate"),
    (lambda r: {**r, "messages": []}, anthropic.BadRequestError, "at least one message"),
    (lambda r: {**r, "messages": [{"role": "user", "content": ""}]}, anthropic.BadRequestError, "non-empty"),
    (_five_cache_markers, anthropic.BadRequestError, "A maximum of 4 blocks with cache_control"),
    (lambda r: {**r, "system": [{"type": "text", "text": "x", "cache_control": {"type": "persistent"}}]},
     anthropic.BadRequestError, "cache_control.type: Input should be 'ephemeral'"),
    (lambda r: {**r, "system": [{"type": "image", "source": {}}]}, anthropic.BadRequestError, "system.0.type"),
    (lambda r: {**r, "tools": [{"name": "record_verdict", "description": "d"}]}, anthropic.BadRequestError,
     "input_schema: Field required"),
    (lambda r: {**r, "tools": [{**VERDICT_TOOL, "name": "record verdict"}]}, anthropic.BadRequestError,
     "name: String should match pattern"),
    (lambda r: {**r, "extra_body": {"temperature": 0.2}}, anthropic.BadRequestError,
     "temperature: Extra inputs are not permitted"),
    (lambda r: {**r, "messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": [
        {"type": "tool_use", "id": "toolu_1", "name": "record_verdict", "input": {}}]},
        {"role": "user", "content": "b"}]}, anthropic.BadRequestError, "without `tool_result` blocks"),
    (lambda r: {**r, "thinking": {"type": "enabled", "budget_tokens": 2048}, "max_tokens": 4096},
     anthropic.BadRequestError, "Thinking may not be enabled when tool_choice forces tool use"),
]


@pytest.mark.parametrize("breakage, error, says", REFUSED, ids=[says[:40] for _, _, says in REFUSED])
def test_requests_the_api_refuses_are_answered_its_way_and_recorded(double, breakage, error, says):
    request = breakage(dict(model=MODEL, max_tokens=1024, system=CACHED_SYSTEM, tools=[VERDICT_TOOL],
                            tool_choice=FORCE_VERDICT, messages=[{"role": "user", "content": "a vs b"}]))
    with pytest.raises(error, match=says) as raised:
        client(double).messages.create(**request)
    assert raised.value.body["type"] == "error" and raised.value.body["request_id"].startswith("req_")
    violations = double.take_violations()
    assert violations and says in violations[0]
    assert double.requests[0].status == raised.value.status_code


def test_headers_api_version_and_house_rules(double):
    with pytest.raises(anthropic.AuthenticationError, match="invalid x-api-key"):
        anthropic.Anthropic(base_url=double.url, api_key="sk-wrong", max_retries=0).messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "a"}])
    with pytest.raises(anthropic.BadRequestError, match="anthropic-version"):
        client(double, default_headers={"anthropic-version": "2024-13-45"}).messages.count_tokens(
            model=MODEL, messages=[{"role": "user", "content": "a"}])
    assert len(double.take_violations()) == 2

    double.answer_with_text("ok")  # the 2023-06-01 API still takes sampling parameters
    old_api = client(double, default_headers={"anthropic-version": "2023-06-01"})
    old_api.messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "a"}],
                            extra_body={"temperature": 0.0})

    double.answer_with_tool("undocumented", {})
    client(double).messages.create(model=MODEL, max_tokens=10, messages=[{"role": "user", "content": "a"}],
                                   tools=[{"name": "undocumented", "input_schema": {"type": "object"}}])
    assert ["no description" in v for v in double.take_violations()] == [True]  # accepted, but a house rule


def test_streaming_is_refused_as_unimplemented_and_script_mistakes_fail_fast(double):
    with pytest.raises(anthropic.BadRequestError, match="does not support"):
        client(double).messages.create(model=MODEL, max_tokens=10, stream=True,
                                       messages=[{"role": "user", "content": "a"}])
    assert len(double.unimplemented) == 1
    double.unimplemented.clear()
    double.clear_requests()

    with pytest.raises(anthropic.InternalServerError, match="no answer is scripted"):
        ask_verdict(client(double, max_retries=2), "a vs b")  # x-should-retry: false stops the SDK's retries
    assert len(double.requests_to("/v1/messages")) == 1
    double.answer_with_tool("some_other_tool", {})
    ask_verdict(client(double), "a vs b")
    errors = double.take_errors()
    assert "no answer is scripted" in errors[0] and "does not offer" in errors[1]


# -- the Message Batches API ------------------------------------------------------------------------------------
def verdict_params(pair: str, **overrides) -> dict:
    return {"model": MODEL, "max_tokens": 1024, "system": CACHED_SYSTEM, "tools": [VERDICT_TOOL],
            "tool_choice": FORCE_VERDICT, "messages": [{"role": "user", "content": pair}], **overrides}


def test_batch_create_poll_and_results_by_custom_id(double):
    sdk = client(double)
    double.batch_polls_before_end = 2
    double.responder = lambda body: {"overlap": "u24" in body["messages"][0]["content"], "reason": "rubric"}
    double.answer_with(error_answer(529), expired_answer())  # queued answers go first, in request order
    requests = [{"custom_id": f"pair-{i}", "params": verdict_params(pair)}
                for i, pair in enumerate(["overloaded", "expired", "u24 vs u24", "par vs seq"])]
    requests.append({"custom_id": "pair-bad", "params": verdict_params("x", max_tokens=0)})  # invalid in a batch

    batch = sdk.messages.batches.create(requests=requests)
    assert batch.id.startswith("msgbatch_") and batch.processing_status == "in_progress"
    assert batch.request_counts.processing == 5 and batch.results_url is None
    statuses = [sdk.messages.batches.retrieve(batch.id).processing_status for _ in range(3)]
    assert statuses == ["in_progress", "in_progress", "ended"]
    ended = sdk.messages.batches.retrieve(batch.id)
    assert ended.results_url == f"{double.url}/v1/messages/batches/{batch.id}/results" and ended.ended_at
    assert ended.request_counts.model_dump() == {"processing": 0, "succeeded": 2, "errored": 2, "canceled": 0,
                                                 "expired": 1}

    results = list(sdk.messages.batches.results(batch.id))
    assert [r.custom_id for r in results] != [r["custom_id"] for r in requests]  # no order promised
    by_id = {r.custom_id: r.result for r in results}
    assert by_id["pair-2"].message.content[0].input == {"overlap": True, "reason": "rubric"}
    assert by_id["pair-3"].message.content[0].input["overlap"] is False
    assert by_id["pair-3"].message.usage.service_tier == "batch"
    assert by_id["pair-0"].error.error.type == "overloaded_error" and by_id["pair-1"].type == "expired"
    assert "max_tokens" in by_id["pair-bad"].error.error.message
    violations = double.take_violations()  # params are checked when the batch runs: errored, and recorded
    assert len(violations) == 1 and "max_tokens" in violations[0]


def test_batch_cancel_list_delete_and_shape_errors(double):
    sdk = client(double)
    double.batch_polls_before_end = 5
    first = sdk.messages.batches.create(requests=[{"custom_id": "a", "params": verdict_params("a")}])
    canceling = sdk.messages.batches.cancel(first.id)
    assert canceling.processing_status == "canceling" and canceling.cancel_initiated_at is not None
    ended = sdk.messages.batches.retrieve(first.id)
    assert ended.processing_status == "ended" and ended.request_counts.canceled == 1
    assert [r.result.type for r in sdk.messages.batches.results(first.id)] == ["canceled"]

    double.batch_polls_before_end = 0
    double.answer_with(tool_answer("record_verdict", {"overlap": True, "reason": "r"}))
    second = sdk.messages.batches.create(requests=[{"custom_id": "b", "params": verdict_params("b")}])
    page = sdk.messages.batches.list(limit=1)
    assert [b.id for b in page.data] == [second.id] and page.has_more
    assert [b.id for b in sdk.messages.batches.list(limit=1)] == [second.id, first.id]  # the SDK pages on
    assert sdk.messages.batches.delete(first.id).type == "message_batch_deleted"
    with pytest.raises(anthropic.NotFoundError):
        sdk.messages.batches.retrieve(first.id)

    with pytest.raises(anthropic.BadRequestError, match="custom_id values must be unique"):
        sdk.messages.batches.create(requests=[{"custom_id": "same", "params": verdict_params("a")}] * 2)
    assert len(double.take_violations()) == 2  # the 404 for the deleted batch is one too


def test_large_batch_stays_cheap(double):
    double.responder = lambda body: {"overlap": False, "reason": body["messages"][0]["content"]}
    sdk = client(double)
    # CPU seconds of this process (the double serves from a thread in it), not wall time: another job loading
    # the cores lengthens the wall clock, while a quadratic step in the double shows here whatever the load.
    started = time.process_time()
    batch = sdk.messages.batches.create(requests=[{"custom_id": f"p{i}", "params": verdict_params(f"pair {i}")}
                                                  for i in range(2000)])
    results = list(sdk.messages.batches.results(batch.id))
    elapsed = time.process_time() - started
    assert len(results) == 2000 and {r.result.type for r in results} == {"succeeded"}
    cached = sum(r.result.message.usage.cache_read_input_tokens > 0 for r in results)
    assert cached == 1999  # the first request writes the rubric's cache entry, the others read it
    assert elapsed < 10, f"2000 batch requests took {elapsed:.1f} CPU seconds"
    assert json.loads(json.dumps(results[0].to_dict()))["result"]["type"] == "succeeded"
