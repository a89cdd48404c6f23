"""The refusal kinds and their one renderer: each kind on each surface (comment, CLI, MCP tool, log, sentence),
and every raise in perfbot naming a kind."""
from __future__ import annotations

import ast
import pickle
from pathlib import Path

import pytest

from bot.core import refusals
from bot.core.refusals import KINDS, Busy, Invalid, NotAllowed, NotConfigured, NotFound, Unreachable, UserError

ROOT = Path(__file__).resolve().parents[2]

# One of each kind, and what each surface must say of it.
CASES = [
    (Invalid("`threads:` must be a whole number", "write e.g. `threads: 8`", at="devs/issues/perf_x.md", line=4,
             key="threads"),
     "⚠️", "invalid", "devs/issues/perf_x.md:4: threads: `threads:` must be a whole number",
     "write e.g. `threads: 8`"),
    (NotFound("`perf_y` is not an open report here", "`/perf status` lists what this thread knows", name="perf_y"),
     "⚠️", "not found", "`perf_y` is not an open report here", "`/perf status` lists what this thread knows"),
    (NotAllowed("`verify` needs write access to this repository; @rita has read", "ask a maintainer to run it",
                rule="write access"),
     "🚫", "not allowed", "`verify` needs write access to this repository; @rita has read",
     "ask a maintainer to run it"),
    (Busy("bisection 3 of `perf_x` is still going", waiting_for="its comment"),
     "⏳", "busy", "bisection 3 of `perf_x` is still going", "wait for its comment, then ask again"),
    (NotConfigured("no runner for backend cuda", key="[[runners]]", owner="operator"),
     "⚠️", "not configured", "no runner for backend cuda",
     "set [[runners]] in the operator's instance file (instance/perfbot.toml or PERFBOT_*)"),
    (Unreachable("the host key is not in /etc/known_hosts", "ssh-keyscan the host into it", host="bench1:22"),
     "⚠️", "unreachable", "bench1:22: the host key is not in /etc/known_hosts", "ssh-keyscan the host into it"),
]
IDS = [case[0].__class__.__name__ for case in CASES]


def test_the_cases_cover_every_kind():
    assert sorted(type(case[0]).__name__ for case in CASES) == sorted(kind.__name__ for kind in KINDS)


@pytest.mark.parametrize("refusal,icon,kind,said,fix", CASES, ids=IDS)
def test_the_comment_answer_has_the_icon_the_problem_and_how_to_retry(refusal, icon, kind, said, fix):
    assert refusals.comment(refusal) == f"{icon} {said}\n\n**To retry:** {fix}"


@pytest.mark.parametrize("refusal,icon,kind,said,fix", CASES, ids=IDS)
def test_the_cli_prints_an_error_line_and_a_fix_line(refusal, icon, kind, said, fix):
    assert refusals.cli(refusal).splitlines() == [f"error: {said}", f"fix: {fix}"]


@pytest.mark.parametrize("refusal,icon,kind,said,fix", CASES, ids=IDS)
def test_the_mcp_tool_error_starts_with_the_kind(refusal, icon, kind, said, fix):
    assert refusals.tool(refusal) == f"{kind}: {said}\nfix: {fix}"


@pytest.mark.parametrize("refusal,icon,kind,said,fix", CASES, ids=IDS)
def test_the_log_line_and_the_sentence_are_one_line(refusal, icon, kind, said, fix):
    assert str(refusal) == refusals.sentence(refusal) == f"{said}; {fix}"
    assert refusals.log_line(refusal) == f"refused ({kind}): {said}; {fix}"


@pytest.mark.parametrize("refusal", [case[0] for case in CASES], ids=IDS)
def test_a_refusal_is_a_value_that_survives_a_pickle(refusal):
    again = pickle.loads(pickle.dumps(refusal))
    assert again == refusal and hash(again) == hash(refusal) and str(again) == str(refusal)
    assert again != UserError(refusal.problem, refusal.fix)  # the kind is part of the value


def test_without_a_fix_no_surface_promises_one():
    bare = Invalid("the artifact is not a readable zip", at="samples.zip")
    assert refusals.comment(bare) == "⚠️ samples.zip: the artifact is not a readable zip"
    assert refusals.cli(bare) == "error: samples.zip: the artifact is not a readable zip"
    assert "fix" not in refusals.tool(bare) and str(bare) == "samples.zip: the artifact is not a readable zip"


def test_a_log_line_folds_a_multi_line_problem():
    refusal = Invalid("build failed:\nmake: *** [all] Error 2", "fix the build")
    assert "\n" not in refusals.log_line(refusal) and "Error 2; fix the build" in refusals.log_line(refusal)


def test_a_place_without_a_line_is_the_file_alone():
    assert str(Invalid("not UTF-8 text", at=".perfbot/build.sh")) == ".perfbot/build.sh: not UTF-8 text"
    assert str(Invalid("not set", key="run.language")) == "run.language: not set"


def _user_error_subclasses() -> list[type]:
    import bot.adapters.runners.actions
    import bot.adapters.runners.base
    import bot.core.commands.args
    import bot.mcp.drafts
    import bot.services.bench.suite  # noqa: F401

    found, todo = [], [UserError]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_every_refusal_class_is_one_of_the_kinds():
    subclasses = _user_error_subclasses()
    assert {"CommandSyntaxError", "BuildError", "ArtifactError", "SuiteError", "DraftError"} <= \
        {sub.__name__ for sub in subclasses}
    assert all(issubclass(sub, KINDS) for sub in subclasses), [s for s in subclasses if not issubclass(s, KINDS)]


def test_no_code_raises_the_bare_base():
    """`raise UserError(...)` says nothing of who can mend it: every raise names a kind."""
    bare = []
    for path in [*ROOT.joinpath("bot").rglob("*.py"), *ROOT.joinpath("handlers").rglob("*.py")]:
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "UserError":
                bare.append(f"{path.relative_to(ROOT)}:{node.lineno}")
    assert bare == []
