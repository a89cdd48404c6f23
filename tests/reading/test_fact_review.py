"""Facts the offline reading cannot decide, asked of the agent reviewer over real HTTP (the Anthropic double):
grounded answers fill them, ungrounded or malformed ones never do, and no content is asked about twice."""
from __future__ import annotations

import pytest
from click.testing import CliRunner

from bot.adapters.fact_reader import FACTS_PROMPT_VERSION
from bot.adapters.git import GitRepository
from bot.adapters.reviewer_agent import AgentReviewer
from bot.adapters.store.models import Record, Revision
from bot.adapters.store.reviews.llm_cache import LlmAnswerCache
from bot.cli import main
from bot.core.reports.agent_facts import FACTS_SCHEMA, FACTS_TOOL
from bot.core.reports.parse import parse
from bot.services.reports.fact_review import FactReview
from bot.services.reports.sync import sync
from tests.anthropic_double import facts_answer, report_line
from tests.anthropic_fixtures import anthropic_api  # noqa: F401  (fixture)
from tests.gitrepo import sync_repo
from tests.reports import C_PROGRAM, LANGUAGE_PROGRAM, canonical_report

MODEL = "claude-sonnet-4-6"
CLAIM = "about four times as long as the C build"

# No front matter, no table: the byline gives track and backend, the ratio stands only in words.
PROSE_ONLY = f"""\
# Nested matches copy the scrutinee in tree sums

SEQ · C backend · this Linux box (2 vCPU)

## Context

Summing a complete binary tree of depth 20 with nested matches is far slower than the 1-to-1 C
translation. Every tree walk in the standard library hits this path.

## Reproduction

```bend
{LANGUAGE_PROGRAM}
```

```c
{C_PROGRAM}
```

## Measurements

The Bend build took about four times as long as the C build on every one of five runs.

## Root cause

The compiler copies the scrutinee of every nested match instead of sharing it.

## Fix

unknown
"""


def ratio_from_the_claim(body: dict):
    return facts_answer({"fact": "ratio", "value": 4, "line": report_line(body, CLAIM), "quote": CLAIM,
                         "how": "language time / C time, about 4"})


def fact_requests(double) -> list:
    return [r for r in double.requests_to("/v1/messages") if r.json["tool_choice"]["name"] == FACTS_TOOL]


def agent(double) -> AgentReviewer:
    return AgentReviewer(double.api_key, MODEL, base_url=double.url)


def parsed(text: str, path: str = "devs/issues/perf_prose_only.md"):
    return parse(path, text.encode())


@pytest.fixture
def lint_cli(tmp_path, monkeypatch):
    """`perfbot lint` as an agent runs it on a draft; `key=double` sets the API key and the double's URL."""
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    for name in ("DATABASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_FILE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(f"PERFBOT_{name}", raising=False)
    draft = tmp_path / "drafts" / "perf_prose_only.md"
    draft.parent.mkdir()
    draft.write_text(PROSE_ONLY)

    def run(*args: str, key=None):
        env = {"PERFBOT_ANTHROPIC_API_KEY": key.api_key, "PERFBOT_ANTHROPIC_BASE_URL": key.url} if key else {}
        return CliRunner().invoke(main, ["lint", *args], env=env, catch_exceptions=False)

    run.draft = draft
    return run


def test_offline_the_finding_names_the_missing_fact_and_the_line_to_add(lint_cli, anthropic_api):
    result = lint_cli(str(lint_cli.draft))
    assert result.exit_code == 1 and "error [ratio-missing]" in result.output
    assert "add the line `ratio: R`" in result.output and "agent" not in result.output
    assert anthropic_api.requests == []  # the double is up, but no key is set: nobody is asked


def test_the_agent_fills_the_ratio_a_prose_only_report_lacks_and_lint_names_it(lint_cli, anthropic_api):
    anthropic_api.responder = ratio_from_the_claim
    result = lint_cli(str(lint_cli.draft), key=anthropic_api)
    assert result.exit_code == 0, result.output
    assert "ratio-missing" not in result.output
    line = PROSE_ONLY.split("\n").index(next(s for s in PROSE_ONLY.split("\n") if CLAIM in s)) + 1
    [note] = [n for n in result.output.splitlines() if "note [agent-facts] fact from the agent reviewer: ratio 4" in n]
    assert f"agent reviewer from line {line}" in note and f"'{CLAIM}'" in note  # who, where, which words
    [request] = fact_requests(anthropic_api)
    body = request.json
    assert body["tools"] == [{"name": FACTS_TOOL, "description": body["tools"][0]["description"],
                              "input_schema": FACTS_SCHEMA}]
    assert body["system"][-1]["cache_control"] == {"type": "ephemeral"}
    question = body["messages"][0]["content"]
    assert "could not read these facts of report `perf_prose_only`: ratio." in question  # only what is missing
    assert f"{line:>4}| The Bend build took {CLAIM}" in question

    again = lint_cli(str(lint_cli.draft), key=anthropic_api)  # the default store cached the answer
    assert again.exit_code == 0 and "fact from the agent reviewer: ratio 4" in again.output
    assert len(fact_requests(anthropic_api)) == 1


def test_a_quote_that_is_not_on_the_cited_line_is_refused(lint_cli, anthropic_api):
    anthropic_api.responder = lambda body: facts_answer(
        {"fact": "ratio", "value": 5, "line": report_line(body, CLAIM), "quote": "about five times as long"})
    result = lint_cli(str(lint_cli.draft), key=anthropic_api)
    assert result.exit_code == 1 and "error [ratio-missing]" in result.output
    line = report_line(fact_requests(anthropic_api)[0].json, CLAIM)
    assert f"agent reviewer's fact refused: ratio: the quoted words are not on line {line}" in result.output


def test_a_schema_breaking_answer_is_retried_once_then_ignored(anthropic_api, database):
    record = parsed(PROSE_ONLY).record
    broken = {"facts": [{"fact": "ratio", "value": 4}]}  # no line, no quote
    anthropic_api.answer_with_tool(FACTS_TOOL, broken)
    anthropic_api.answer_with_tool(FACTS_TOOL, {**broken, "verdict": "duplicate"})
    review = FactReview(agent(anthropic_api), database)
    reviewed = review.review(parsed(PROSE_ONLY), PROSE_ONLY)
    assert reviewed.result.record == record and reviewed.result.record.ratio is None  # nothing acted on
    assert "does not fit the schema" in reviewed.problem and reviewed.asked
    _first, retry = fact_requests(anthropic_api)
    feedback = retry.json["messages"][-1]["content"][0]
    assert feedback["is_error"] is True and "'line' is a required property" in feedback["content"]
    # The failed answer is cached too: a fresh process asks nothing about the same content.
    fresh = FactReview(agent(anthropic_api), database).review(parsed(PROSE_ONLY), PROSE_ONLY)
    assert not fresh.asked and fresh.result.record.ratio is None and len(fact_requests(anthropic_api)) == 2


def test_a_retry_that_fits_the_schema_is_used_and_usage_is_counted(anthropic_api, database):
    anthropic_api.answer_with_tool(FACTS_TOOL, {"facts": [{"fact": "ratio", "value": "four"}]})
    anthropic_api.responder = ratio_from_the_claim
    reading = agent(anthropic_api).read_facts(parsed(PROSE_ONLY).record, PROSE_ONLY)
    assert reading.asked == ("ratio",) and reading.answer["facts"][0]["quote"] == CLAIM and not reading.problem
    assert reading.usage["input_tokens"] > 0 and reading.usage["output_tokens"] > 0
    assert reading.usage["cache_creation_input_tokens"] + reading.usage["cache_read_input_tokens"] > 0
    assert len(fact_requests(anthropic_api)) == 2


def test_nothing_is_asked_when_no_fact_is_missing(anthropic_api, database, lint_cli, tmp_path):
    complete = canonical_report("perf_complete")
    review = FactReview(agent(anthropic_api), database)
    reviewed = review.review(parsed(complete, "devs/issues/perf_complete.md"), complete)
    assert not reviewed.asked and reviewed.notes() == []
    draft = tmp_path / "drafts" / "perf_complete.md"
    draft.write_text(complete)
    assert lint_cli(str(draft), key=anthropic_api).exit_code == 0
    assert anthropic_api.requests == []


def test_sync_asks_once_per_content_and_stores_the_agent_fact(anthropic_api, database, git_repo):
    anthropic_api.responder = ratio_from_the_claim
    review = FactReview(agent(anthropic_api), database)
    git_repo.write("devs/issues/perf_prose_only.md", PROSE_ONLY).commit("prose-only report")
    git_repo.write("devs/issues/perf_complete.md", canonical_report("perf_complete")).commit("complete report")
    repo = GitRepository(git_repo.root)
    try:
        sync(database, repo, facts=review)
        git_repo.write("devs/issues/perf_other.md", canonical_report("perf_other")).commit("another")
        sync(database, repo, facts=FactReview(agent(anthropic_api), database))
        git_repo.write("devs/issues/perf_prose_copy.md", PROSE_ONLY).commit("the same words again")
        sync(database, repo, facts=FactReview(agent(anthropic_api), database))
    finally:
        repo.close()
    assert len(fact_requests(anthropic_api)) == 1  # one content missing a fact; the copy hits the cache
    with database.session() as session:
        ratios = {r.slug: (r.ratio, r.errors) for r in session.query(Record)}
        facts = session.query(Revision).join(Record).filter(Record.slug == "perf_prose_only").one().facts
    assert ratios["perf_prose_only"] == (4.0, 0) and ratios["perf_prose_copy"] == (4.0, 0)
    assert "the agent reviewer read" in facts["derived"]["ratio"]
    cached = LlmAnswerCache(database, "facts").get(parsed(PROSE_ONLY).record.content_hash, MODEL,
                                                   FACTS_PROMPT_VERSION)
    assert cached.answer["asked"] == ["ratio"] and cached.slug == "perf_prose_only" and cached.usage["input_tokens"] > 0


def test_sync_without_an_agent_leaves_the_fact_missing(anthropic_api, database, git_repo):
    git_repo.write("devs/issues/perf_prose_only.md", PROSE_ONLY).commit("prose-only report")
    sync_repo(database, git_repo)
    with database.session() as session:
        record = session.query(Record).one()
        assert record.ratio is None and record.errors >= 1
    assert anthropic_api.requests == []


def test_an_unreachable_or_refusing_api_leaves_the_offline_reading_and_caches_nothing(anthropic_api, database):
    anthropic_api.fail_next(529, "overloaded_error")
    down = FactReview(AgentReviewer(anthropic_api.api_key, MODEL, base_url=anthropic_api.url, max_retries=0), database)
    reviewed = down.review(parsed(PROSE_ONLY), PROSE_ONLY)
    assert reviewed.result.record.ratio is None and "unavailable" in reviewed.problem
    paused = down.review(parsed(PROSE_ONLY), PROSE_ONLY)  # a sync of many reports does not wait out each one
    assert "moments ago" in paused.problem and len(fact_requests(anthropic_api)) == 1
    anthropic_api.fail_next(401, "authentication_error")
    refused = FactReview(agent(anthropic_api), database).review(parsed(PROSE_ONLY), PROSE_ONLY)
    assert refused.result.record.ratio is None and "refused the request (401)" in refused.problem
    anthropic_api.responder = ratio_from_the_claim  # the API is back: the question was never cached, so it is asked
    healed = FactReview(agent(anthropic_api), database).review(parsed(PROSE_ONLY), PROSE_ONLY)
    assert healed.asked and healed.result.record.ratio == 4.0 and len(fact_requests(anthropic_api)) == 3


def test_the_double_refuses_a_tool_whose_input_schema_is_not_json_schema(anthropic_api):
    import anthropic

    client = anthropic.Anthropic(base_url=anthropic_api.url, api_key=anthropic_api.api_key, max_retries=0)
    broken = {**FACTS_SCHEMA, "properties": {"facts": {"type": "list"}}}  # "list" is no JSON Schema type
    with pytest.raises(anthropic.BadRequestError, match="JSON schema is invalid"):
        client.messages.create(model=MODEL, max_tokens=64, messages=[{"role": "user", "content": "facts?"}],
                               tools=[{"name": FACTS_TOOL, "description": "d", "input_schema": broken}],
                               tool_choice={"type": "tool", "name": FACTS_TOOL})
    assert "input_schema: JSON schema is invalid" in anthropic_api.take_violations()[0]


def test_perfbot_sync_with_a_key_asks_the_agent_and_without_one_does_not(anthropic_api, git_repo, tmp_path,
                                                                         monkeypatch):
    monkeypatch.setenv("PERFBOT_INSTANCE_DIR", str(tmp_path / "instance"))
    for name in ("DATABASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_API_KEY_FILE", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(f"PERFBOT_{name}", raising=False)
    anthropic_api.responder = ratio_from_the_claim
    git_repo.write("devs/issues/perf_prose_only.md", PROSE_ONLY).commit("prose-only report")
    offline_db = f"sqlite:///{tmp_path / 'offline.sqlite3'}"
    assert CliRunner().invoke(main, ["sync", "--repo", str(git_repo.root), "--db", offline_db]).exit_code == 0
    assert fact_requests(anthropic_api) == []
    env = {"PERFBOT_ANTHROPIC_API_KEY": anthropic_api.api_key, "PERFBOT_ANTHROPIC_BASE_URL": anthropic_api.url}
    agent_db = f"sqlite:///{tmp_path / 'agent.sqlite3'}"
    result = CliRunner().invoke(main, ["sync", "--repo", str(git_repo.root), "--db", agent_db], env=env)
    assert result.exit_code == 0, result.output
    assert len(fact_requests(anthropic_api)) == 1
    shown = CliRunner().invoke(main, ["show", "perf_prose_only", "--db", agent_db]).output
    assert "ratio 4 read by the agent reviewer from line" in shown
