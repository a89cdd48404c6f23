"""A committed `.perfbot-run/`, `.perfbot-recipe` or `.perfbot-built` is ignored by every run (that is how a link
to a host file was once planted), and a push that commits one is told so where people look: a `reserved-in-tree`
warning in the lint comment of every report, through the push handler against the GitHub double, gone again
once the path is removed."""
from __future__ import annotations

import handlers
from bot.core.lint.checks import RESERVED_SHOWN, reserved_paths
from bot.core.lint.rules import lint
from bot.core.reports.parse import parse
from bot.core.reports.records import ReadingOptions
from tests.flows import github_bot
from tests.gitrepo import RepoBuilder
from tests.reading.test_sync_order import report
from tests.service.test_push_order import REPO, push_event

PLANTED = ".perfbot-run/perf_r01/main.dl"


def lint_comments(github) -> dict[int, str]:
    """Each record issue's lint comment, by issue number."""
    with github.state.lock:
        repo = github.state.repo("team", "runtime")
        return {c.issue_number: c.body for c in repo.comments.values() if c.body.startswith("<!-- perfbot:lint ")}


def record_issues(github) -> set[int]:
    with github.state.lock:
        return {n for n, i in github.state.repo("team", "runtime").issues.items()
                if (i.body or "").startswith("<!-- perfbot:record ")}


def test_a_push_that_commits_a_reserved_name_is_told_on_every_reports_lint_comment(github, database, tmp_path):
    github.add_repo(REPO)
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    first = remote.write(*report(1)).write(*report(2)).commit("two reports")
    with github_bot(github, database, tmp_path) as (services, _worker, _queue):
        assert handlers.dispatch(push_event(first, "push-1"), services) == []
        numbers = record_issues(github)
        assert len(numbers) == 2 and not any("reserved-in-tree" in b for b in lint_comments(github).values())
        # A push that touches no report, only plants a run folder's program (a link, once, to a host file)
        planted = remote.write(PLANTED, "items 1\n").write("src/.perfbot-built", "x").commit("a run folder")
        assert handlers.dispatch(push_event(planted, "push-2"), services) == []
        told = lint_comments(github)
        assert set(told) == numbers, told
        for body in told.values():
            assert "`reserved-in-tree`" in body and "| warning |" in body, body
            assert f"'{PLANTED}'" in body and "'src/.perfbot-built'" in body and "ignores these" in body
            assert "git rm -r --cached '.perfbot-run' 'src/.perfbot-built'" in body
        removed = remote.delete(PLANTED).delete("src/.perfbot-built").commit("run folders are not ours to commit")
        assert handlers.dispatch(push_event(removed, "push-3"), services) == []
        assert set(lint_comments(github)) == numbers
        assert not any("reserved-in-tree" in b for b in lint_comments(github).values()), lint_comments(github)
    assert github.problems() == []


def test_the_tree_check_names_only_reserved_names_and_keeps_a_bounded_list():
    paths = ["src/run.c", "docs/perfbot-run.md", ".perfbot-recipe", "a/.perfbot-run/x", "a/.perfbot-runs/y",
             *(f"many/.perfbot-built/{n:03d}" for n in range(40))]
    found = reserved_paths(paths)
    assert found[:2] == (".perfbot-recipe", "a/.perfbot-run/x") and len(found) == RESERVED_SHOWN
    path, text = report(1)
    result = parse(path, text.encode())
    found_lint = lint(result, path=path, reading=ReadingOptions(reserved=found))
    [warning] = [f for f in found_lint if f.rule == "reserved-in-tree"]
    assert warning.message.startswith(f"the repository commits {RESERVED_SHOWN} or more path(s)")
    assert not [f for f in lint(result, path=path) if f.rule == "reserved-in-tree"]
