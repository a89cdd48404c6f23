"""Fixes attached by PR body or branch name, and their token delta counted with a real lexer."""
from __future__ import annotations

import pytest

from bot.core.tracker.fixes import slugs_fixed, token_delta, tokens


@pytest.mark.parametrize("body, branch, expected", [
    ("Fixes perf_deep_match\n\nRebuild the arms.", "feature/x", ("perf_deep_match",)),
    ("fixes: perf_a, perf_b and perf_c", None, ("perf_a", "perf_b", "perf_c")),
    ("This PR mentions perf_a but fixes nothing.", "main", ()),
    (None, "fix/perf_nested_match-rebuild-arms", ("perf_nested_match",)),
    ("Fixes perf_a", "fix/perf_a", ("perf_a",)),
    ("```\nFixes perf_in_code\n```", None, ()),
])
def test_slugs_fixed(body, branch, expected):
    assert slugs_fixed(body, branch) == expected


def test_tokens_ignore_comments_and_whitespace():
    assert tokens("int x = 1; /* a long comment */\n\n", "a.c") == tokens("int   x=1;", "a.c") == 5


def test_a_representation_change_can_shrink_the_code():
    before = "Box *b = malloc(sizeof *b); b->v = x; use(b); free(b);"
    after = "use_value(x);"
    assert token_delta([("runtime/ref.c", before, after)]) < 0
    assert token_delta([("runtime/new.c", None, "int y;"), ("old.py", "x = 1", None)]) == 3 - 3
