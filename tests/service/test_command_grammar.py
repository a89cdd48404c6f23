"""The comment-command grammar: which lines are commands, what each verb accepts, and what an edit reruns."""
from __future__ import annotations

import dataclasses
import os
import time

import pytest

from bot.core.commands import (
    ALIASES,
    MAX_COMMANDS,
    VERBS,
    CommandSyntaxError,
    Invocation,
    find_commands,
    help_text,
    new_commands,
)
from bot.core.commands.verbs import (
    Attach,
    Bisect,
    Cancel,
    Close,
    Detach,
    Digest,
    Dup,
    Help,
    Merge,
    NotDup,
    Reopen,
    Status,
    Verify,
)
from bot.errors import UserError


def only(body: str, bot_name: str = "perfbot") -> Invocation:
    found = find_commands(body, bot_name)
    assert len(found) == 1, found
    return found[0]


GOOD = [
    ("/perf help", Help()),
    ("/perf", Help()),
    ("/perf help verify", Help()),
    ("/perf status", Status(None)),
    ("/perf status perf_sort_alloc", Status("perf_sort_alloc")),
    ("/perf verify", Verify((), None, None)),
    ("/perf verify perf_a perf_b", Verify(("perf_a", "perf_b"), None, None)),
    ("/perf verify perf_a perf_a", Verify(("perf_a",), None, None)),
    ("/perf verify perf_a runner=bench-1.local samples=30", Verify(("perf_a",), "bench-1.local", 30)),
    ("/perf verify Samples=200 RUNNER=x", Verify((), "x", 200)),
    ("/perf verify samples=1", Verify((), None, 1)),
    ("/perf attach perf_a", Attach("perf_a")),
    ("/perf detach perf_a", Detach("perf_a")),
    ("/perf dup perf_a of perf_b", Dup("perf_a", "perf_b")),
    ("/perf dup perf_a OF perf_b", Dup("perf_a", "perf_b")),
    ("/perf not-dup perf_a perf_b", NotDup("perf_a", "perf_b")),
    ("/perf notdup perf_a perf_b", NotDup("perf_a", "perf_b")),
    ("/perf not_dup perf_a perf_b", NotDup("perf_a", "perf_b")),
    ("/perf merge perf_b perf_a", Merge("perf_b", "perf_a")),
    ('/perf close perf_a reason="fixed by the GC rewrite"', Close("perf_a", "fixed by the GC rewrite")),
    ("/perf close perf_a reason='single quotes'", Close("perf_a", "single quotes")),
    ("/perf close perf_a reason=obsolete", Close("perf_a", "obsolete")),
    ("/perf close perf_a reason=\u201ccurly quotes\u201d", Close("perf_a", "curly quotes")),
    ("/perf reopen perf_a", Reopen("perf_a")),
    ("/perf digest", Digest()),
    ("/perf cancel", Cancel(None)),
    ("/perf cancel 12", Cancel(12)),
    ("/perf bisect perf_a", Bisect("perf_a")),
    ("/perf bisect perf_a A1B2C3D..main", Bisect("perf_a", "a1b2c3d", "main")),
    ("/perf bisect perf_a v1.2..", Bisect("perf_a", "v1.2", None)),
    ("/perf bisect perf_a ..release/2026-12", Bisect("perf_a", None, "release/2026-12")),
    ("/PERF VERIFY perf_a", Verify(("perf_a",), None, None)),
    ("/perf   verify\tperf_a  ", Verify(("perf_a",), None, None)),
    ("/perf verify perf\\_a", Verify(("perf_a",), None, None)),  # markdown's escaped underscore
]


@pytest.mark.parametrize("body,command", GOOD, ids=[body for body, _ in GOOD])
def test_a_well_formed_command_parses_into_its_dataclass(body, command):
    invocation = only(body)
    assert (invocation.command, invocation.error, invocation.unknown) == (command, None, False)
    assert invocation.line == 1 and invocation.text == body.strip()
    assert invocation.verb in VERBS and isinstance(invocation.command, type(command))


BAD = [
    ("/perf status perf_a perf_b", "status", "at most 1 SLUG"),
    ("/perf status a", "status", "did you mean perf_a?"),
    ("/perf status perf_a extra=1", "status", "status takes no key=value options"),
    ("/perf verify perf_a samples=0", "verify", "from 1 to 200"),
    ("/perf verify samples=201", "verify", "from 1 to 200"),
    ("/perf verify samples=ten", "verify", "got 'ten'"),
    ("/perf verify samples=-3", "verify", "from 1 to 200"),
    ("/perf verify runner=-x", "verify", "not a runner name"),
    ("/perf verify runner=" + "a" * 64, "verify", "not a runner name"),
    ("/perf verify runner=", "verify", "not a runner name"),
    ("/perf verify timeout=3", "verify", "unknown option timeout=; verify takes only runner=, samples="),
    ("/perf verify samples=3 samples=4", "verify", "samples= is given twice"),
    ("/perf verify " + " ".join(f"perf_{n}" for n in range(21)), "verify", "at most 20 SLUGs"),
    ("/perf verify Perf_A", "verify", "did you mean perf_a?"),
    ("/perf verify devs/issues/perf_a.md", "verify", "did you mean perf_a?"),
    ("/perf verify sort-alloc", "verify", "did you mean perf_sort_alloc?"),
    ("/perf verify #12", "verify", "issue or PR number"),
    ("/perf verify perf_", "verify", "is not a report slug (perf_ followed by"),
    ("/perf attach", "attach", "exactly 1 SLUG, got nothing"),
    ("/perf attach perf_a perf_b", "attach", "exactly 1 SLUG, got 'perf_a', 'perf_b'"),
    ("/perf attach sort", "attach", "did you mean perf_sort?"),
    ("/perf detach", "detach", "exactly 1 SLUG"),
    ("/perf dup perf_a perf_b", "dup", "write 'of' between"),
    ("/perf dup perf_a to perf_b", "dup", "the word 'of'"),
    ("/perf dup perf_a of perf_a", "dup", "duplicate of itself"),
    ("/perf dup perf_a of b", "dup", "did you mean perf_b?"),
    ("/perf not-dup perf_a", "not-dup", "exactly 2 SLUGs"),
    ("/perf notdup perf_a perf_a", "not-dup", "two different records"),
    ("/perf merge perf_a perf_b perf_c", "merge", "exactly 2 SLUGs"),
    ("/perf close perf_a", "close", 'needs reason="..."'),
    ('/perf close perf_a reason=""', "close", 'needs reason="..."'),
    ('/perf close perf_a reason="   "', "close", 'needs reason="..."'),
    ("/perf close perf_a reason=two words", "close", "quote a reason of several words"),
    (f'/perf close perf_a reason="{"x" * 501}"', "close", "keep it to 500"),
    ('/perf close reason="why"', "close", "exactly 1 SLUG"),
    ('/perf close perf_a reason="unbalanced', "close", "no closing quotation"),
    ("/perf close perf_a reason='unbalanced", "close", "no closing quotation"),
    ("/perf close perf_a reason=x \\", "close", "cannot read the arguments"),
    ("/perf close perf_a why=x", "close", "unknown option why=; close takes only reason="),
    ("/perf reopen", "reopen", "exactly 1 SLUG"),
    ("/perf digest now", "digest", "digest takes no arguments, got 'now'"),
    ("/perf cancel x", "cancel", "bench run number such as 12"),
    ("/perf cancel 0", "cancel", "bench run number such as 12"),
    ("/perf cancel 1234567890", "cancel", "bench run number such as 12"),
    ("/perf cancel #7", "cancel", "without '#'"),
    ("/perf cancel 1 2", "cancel", "at most 1 RUN"),
    ("/perf bisect", "bisect", "at least 1 SLUG"),
    ("/perf bisect perf_a main", "bisect", "GOOD..BAD (two dots)"),
    ("/perf bisect perf_a a...b", "bisect", "GOOD..BAD (two dots)"),
    ("/perf bisect perf_a ..", "bisect", "names neither end"),
    ("/perf bisect perf_a -c=x..main", "bisect", "starts with '-'"),
    ("/perf bisect perf_a main..a~1", "bisect", "contains '~'"),
    ("/perf bisect perf_a a..b extra", "bisect", "at most 2"),
    ("/perf bisect perf_a a..b samples=3", "bisect", "takes no key=value options"),
]


@pytest.mark.parametrize("body,verb,problem", BAD, ids=[body[:60] for body, _, _ in BAD])
def test_a_malformed_command_says_what_is_wrong_and_shows_the_right_form(body, verb, problem):
    invocation = only(body)
    assert invocation.command is None and not invocation.unknown and invocation.verb == verb
    assert invocation.error is not None and problem in str(invocation.error)
    assert invocation.error.fix.endswith(f"usage: {VERBS[verb].usage}")


@pytest.mark.parametrize("body,verb", [
    ("/perf frobnicate perf_a", "frobnicate"),
    ("@perfbot Thanks!", "thanks!"),
    ("/perf verify-all", "verify-all"),
    ('/perf "verify perf_a', '"verify'),
])
def test_an_unknown_verb_is_reported_as_unknown(body, verb):
    invocation = only(body)
    assert invocation.unknown and invocation.command is None
    assert (invocation.verb, str(invocation.error)) == (verb, f"unknown command '{verb}'")


def test_a_long_unknown_verb_is_cut_in_the_answer():
    invocation = only("/perf " + "x" * 500)
    assert invocation.unknown and len(invocation.verb) == 60 and str(invocation.error).endswith("…'")


@pytest.mark.parametrize("body,bot_name,expected", [
    ("@perfbot verify perf_a", "perfbot", Verify(("perf_a",))),
    ("@PerfBot[bot] verify perf_a", "perfbot", Verify(("perf_a",))),
    ("@PERFBOT digest", "perfbot", Digest()),
    ("@perfbot", "perfbot", Help()),
    ("@benchy status", "benchy", Status()),
    ("@benchy[bot] status", "@benchy[bot]", Status()),
    ("/perf status", "benchy", Status()),
    ("@my.bot-1 status", "my.bot-1", Status()),
])
def test_the_bot_can_be_mentioned_by_its_configured_name(body, bot_name, expected):
    assert only(body, bot_name).command == expected


@pytest.mark.parametrize("body,bot_name", [
    ("@perfbot verify", "benchy"),      # another bot's name
    ("@perfbotx verify", "perfbot"),    # a longer name
    ("@perfbot, verify", "perfbot"),    # prose addressed to the bot
    ("@perfbot[bot]x verify", "perfbot"),
    ("@my-bot-1 status", "my.bot-1"),   # the name is matched literally, not as a pattern
    ("/perfx verify", "perfbot"),
    ("/perf-verify", "perfbot"),
    ("perf verify", "perfbot"),
    ("please /perf verify", "perfbot"),
    ("\\/perf verify", "perfbot"),
    ("`/perf verify`", "perfbot"),
    ("`/perf verify` runs the bench", "perfbot"),
    ("- /perf verify", "perfbot"),      # a list marker before the prefix: not at the start of the line
    ("1. /perf verify", "perfbot"),
    ("# /perf verify", "perfbot"),
    ("", "perfbot"),
    ("   \n\n", "perfbot"),
    ("@ verify", ""),                   # an empty bot name turns mentions off
])
def test_lines_that_are_not_commands(body, bot_name):
    assert find_commands(body, bot_name) == []


def test_no_body_has_no_commands():
    assert find_commands(None) == [] and new_commands(None, None) == []


IGNORED = {
    "backtick fence": "```\n/perf verify perf_a\n```",
    "tilde fence": "~~~sh\n/perf verify perf_a\n~~~",
    "long fence": "````\n```\n/perf verify perf_a\n```\n````",
    "unclosed fence": "```\n/perf verify perf_a",
    "indented code": "Look:\n\n    /perf verify perf_a\n",
    "quote": "> /perf verify perf_a",
    "nested quote": "> > /perf verify perf_a",
    "quote in list": "- item\n\n  > /perf verify perf_a",
    "lazy quote line": "> I asked for\n/perf verify perf_a",
    "html comment": "<!--\n/perf verify perf_a\n-->",
    "bot marker": "<!-- perfbot:bench-run 12 /perf verify -->",
    "inline html comment": "text <!-- hidden\n/perf verify perf_a -->",
    "multi-line code span": "try `this\n/perf verify perf_a` here",
    "double-backtick span": "try ``a ` b\n/perf verify perf_a`` here",
    "html block": "<details>\n/perf verify perf_a\n</details>",
    "table": "/perf verify perf_a | x\n--- | ---\n/perf digest | y",
}


@pytest.mark.parametrize("body", IGNORED.values(), ids=IGNORED.keys())
def test_commands_in_code_quotes_html_and_tables_are_ignored(body):
    assert find_commands(body) == []
    assert [i.command for i in find_commands("/perf digest\n\n" + body)] == [Digest()]


VISIBLE = {
    "after an inline code span": ("`x` is slow\n/perf verify perf_a", 2),
    "after a closed comment": ("text <!-- c -->\n/perf verify perf_a", 2),
    "escaped backtick": ("a \\`b\n/perf verify perf_a\nc`", 2),
    "unmatched backtick run": ("a `` b\n/perf verify perf_a\nc `", 2),
    "unclosed comment": ("text <!-- never closed\n/perf verify perf_a", 2),
    "inside a list item": ("- one\n  /perf verify perf_a", 2),
    "after a quote and a blank line": ("> quoted\n\n/perf verify perf_a", 3),
    "in prose, after a paragraph line": ("I think\n/perf verify perf_a\nwould help", 2),
    "indented up to three spaces": ("   /perf verify perf_a", 1),
    "setext heading text": ("/perf verify perf_a\n---", 1),
    "in a details block paragraph": ("<details>\n\n/perf verify perf_a\n\n</details>", 3),
    "after a fence": ("```\ncode\n```\n/perf verify perf_a", 4),
}


@pytest.mark.parametrize("body,line", VISIBLE.values(), ids=VISIBLE.keys())
def test_commands_in_visible_text_are_found_on_their_line(body, line):
    invocation = only(body)
    assert (invocation.command, invocation.line) == (Verify(("perf_a",)), line)


def test_several_commands_in_one_comment_keep_their_order_and_lines():
    body = ("Thanks for the report.\n/perf attach perf_a\n\n```\n/perf digest\n```\n"
            "@perfbot verify perf_a samples=5\n/perf bogus\n/perf status x\n")
    found = find_commands(body)
    assert [(i.line, i.verb, i.unknown, i.error is None) for i in found] == [
        (2, "attach", False, True), (7, "verify", False, True), (8, "bogus", True, False), (9, "status", False, False)]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_crlf_and_cr_bodies_count_lines_as_a_person_sees_them(newline):
    body = newline.join(["hello", "/perf verify perf_a", "```", "/perf digest", "```", "/perf status"])
    found = find_commands(body)
    assert [(i.line, i.command) for i in found] == [(2, Verify(("perf_a",))), (6, Status())]
    assert all("\r" not in i.text for i in found)


def test_past_the_limit_one_error_stands_for_the_rest():
    body = "\n".join(f"/perf status perf_{n}" for n in range(14))
    found = find_commands(body)
    assert len(found) == MAX_COMMANDS + 1
    assert [i.command for i in found[:MAX_COMMANDS]] == [Status(f"perf_{n}") for n in range(MAX_COMMANDS)]
    extra = found[-1]
    assert (extra.line, extra.verb, extra.command, extra.unknown) == (11, "status", None, False)
    assert f"at most {MAX_COMMANDS} commands" in str(extra.error) and "the 3 after it" in str(extra.error)
    assert extra.error is not None and extra.error.fix == "put them in another comment"


def test_exactly_the_limit_is_fine():
    assert all(i.error is None for i in find_commands("\n".join(["/perf digest"] * MAX_COMMANDS)))


@pytest.mark.parametrize("piece", ["` ", "`` x ", "<!-- ", "\\`", "> ", "- ", "/perf x\n"])
def test_a_hostile_body_is_read_in_linear_time(piece):
    body = piece * (65536 // len(piece))  # GitHub's largest comment
    started = time.thread_time()  # CPU time: waiting for a loaded core does not count
    find_commands(body)
    assert time.thread_time() - started < 5


def test_an_overlong_command_line_is_refused():
    invocation = only("/perf verify perf_a " + "perf_b " * 200)
    assert invocation.command is None and invocation.verb == "verify" and "at most 1000" in str(invocation.error)
    assert only("/perf verify " + "perf_a " * 140).command == Verify(("perf_a",))


EDITS = {
    "a second command added": ("/perf attach perf_a", "/perf attach perf_a\n/perf verify perf_a",
                               [(2, "verify")]),
    "prose changed only": ("I think\n/perf verify perf_a", "I really think\n/perf verify perf_a", []),
    "the command moved": ("/perf verify perf_a\n\nthanks", "thanks, see below\n\n\n/perf verify perf_a", []),
    "prefix and spacing changed": ("/perf verify  perf_a", "@perfbot[bot]   VERIFY perf_a", []),
    "an argument changed": ("/perf verify perf_a", "/perf verify perf_b", [(1, "verify")]),
    "a malformed command fixed": ("/perf attach a", "/perf attach perf_a", [(1, "attach")]),
    "a malformed command left alone": ("/perf attach a", "/perf attach a\nmore words", []),
    "a repeat added": ("/perf digest", "/perf digest\n/perf digest", [(2, "digest")]),
    "a command taken out of a fence": ("```\n/perf digest\n```", "/perf digest", [(1, "digest")]),
    "a command quoted away": ("/perf digest", "> /perf digest", []),
    "a first edit (no old body)": (None, "/perf digest", [(1, "digest")]),
    "bare prefix is help": ("/perf", "/perf help", []),
}


@pytest.mark.parametrize("old,new,expected", EDITS.values(), ids=EDITS.keys())
def test_an_edit_runs_only_the_commands_that_are_new(old, new, expected):
    assert [(i.line, i.verb) for i in new_commands(old, new)] == expected


def test_help_lists_every_verb_once_in_a_stable_order_with_the_bot_name():
    text = help_text("benchy")
    usages = [line for line in text.splitlines() if line.startswith("- `")]
    assert usages == [f"- `{v.usage}` — {v.summary}" for v in VERBS.values()]
    assert "@benchy <verb>" in text and "except help and status" in text
    assert help_text() == help_text("perfbot") and "@perfbot <verb>" in help_text("@perfbot[bot]")


def test_every_verb_follows_the_contract():
    assert list(VERBS) == ["help", "status", "verify", "attach", "detach", "dup", "not-dup", "merge", "close",
                           "reopen", "digest", "cancel", "bisect"]
    assert all(target in VERBS for target in ALIASES.values())
    for name, verb in VERBS.items():
        assert verb.name == name and verb.usage.startswith(f"/perf {name}") and verb.summary
        assert verb.write == (name not in ("help", "status"))
        command = verb.parse(*_example_arguments(name))
        assert dataclasses.is_dataclass(command) and type(command).__doc__
        with pytest.raises(dataclasses.FrozenInstanceError):
            command.x = 1


def _example_arguments(verb: str) -> tuple[tuple[str, ...], dict[str, str]]:
    return {
        "attach": (("perf_a",), {}), "detach": (("perf_a",), {}), "reopen": (("perf_a",), {}),
        "dup": (("perf_a", "of", "perf_b"), {}), "not-dup": (("perf_a", "perf_b"), {}),
        "merge": (("perf_a", "perf_b"), {}), "close": (("perf_a",), {"reason": "r"}), "bisect": (("perf_a",), {}),
    }.get(verb, ((), {}))


def test_parse_raises_a_user_error_with_the_problem_only():
    with pytest.raises(CommandSyntaxError) as raised:
        VERBS["attach"].parse(("nope",), {})
    assert isinstance(raised.value, UserError) and "usage" not in str(raised.value)


try:
    from hypothesis import given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - hypothesis is a test dependency, but the grammar tests stand without it
    st = None

if st is not None:
    _PIECES = st.sampled_from([
        "/perf", "/PERF ", "@perfbot ", "@perfbot[bot] ", " ", "\n", "\r\n", "\r", "\t", "```", "~~~", "`", "``",
        "> ", "- ", "    ", "<!--", "-->", "<details>", '"', "'", "\\", "=", "reason=", "samples=", "runner=",
        "verify", "close", "dup", "of", "not-dup", "cancel", "help", "perf_a", "perf_", "#12", "\u201c", "\x00",
        "|", "---", "x" * 300,
    ])
    _BODIES = st.one_of(st.text(), st.lists(st.one_of(_PIECES, st.text(max_size=5)), max_size=60).map("".join))

    @settings(max_examples=int(os.environ.get("PERFBOT_FUZZ_EXAMPLES", "400")), deadline=None)
    @given(body=_BODIES, old=_BODIES)
    def test_any_text_yields_well_formed_invocations_and_never_raises(body, old):
        found = find_commands(body)
        assert len(found) <= MAX_COMMANDS + 1
        lines = body.replace("\r\n", "\n").replace("\r", "\n").split("\n")
        for invocation in found:
            assert (invocation.command is None) == (invocation.error is not None)
            assert invocation.unknown <= (invocation.command is None)
            assert 1 <= invocation.line <= len(lines) and invocation.text == lines[invocation.line - 1].strip()
        fresh = new_commands(old, body)
        assert all(invocation in found for invocation in fresh)
        assert new_commands(body, body) == []
