"""The documentation keeps up with the code: every lint rule is documented where agents and people look, and the
README stays a page a newcomer reads in five minutes."""
from __future__ import annotations

import re
from pathlib import Path

from bot.core.lint.rules import RULES
from bot.core.reports.phrasings import PHRASINGS

PROJECT = Path(__file__).resolve().parents[2]


def rules_table() -> str:
    rows = ["| rule | severity | found by | what it means |", "| --- | --- | --- | --- |"]
    rows += [f"| `{r.id}` | {r.severity.value} | {r.emitted_by} | {r.summary.replace('|', '/')} |" for r in RULES]
    return "\n".join(rows)


def phrasings_table() -> str:
    rows = ["| phrasing | states | an example it reads |", "| --- | --- | --- |"]
    rows += [f"| `{p.id}` | {p.states.replace('_', ' ')} | {p.example.replace('|', '/')} |" for p in PHRASINGS]
    return "\n".join(rows)


def test_the_format_spec_lists_every_phrasing_the_parser_reads():
    spec = (PROJECT / "devs" / "ISSUE_FORMAT.md").read_text(encoding="utf-8")
    assert phrasings_table() in spec, ("ISSUE_FORMAT.md's phrasings table is stale; replace it with:\n"
                                       + phrasings_table())


def test_the_report_format_page_lists_every_rule_exactly_as_the_code_defines_it():
    page = (PROJECT / "docs" / "report-format.md").read_text(encoding="utf-8")
    assert rules_table() in page, "docs/report-format.md's rule table is stale; replace it with:\n" + rules_table()


def test_the_format_spec_documents_every_rule_id():
    spec = (PROJECT / "devs" / "ISSUE_FORMAT.md").read_text(encoding="utf-8")
    missing = [r.id for r in RULES if not re.search(rf"`{re.escape(r.id)}`", spec)]
    assert not missing, f"devs/ISSUE_FORMAT.md does not document: {missing}"


def test_ci_runs_exactly_the_readme_test_command():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    ci = (PROJECT / ".ci" / "run").read_text(encoding="utf-8")
    assert "\n    ./test.sh\n" in readme and "exec ./test.sh" in ci


README_SECTIONS = ["The two commands", "Adopt perfbot on your runtime", "The report format", "Commands",
                   "Documentation"]


def test_the_readme_is_short_and_in_the_newcomers_order():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= 250, f"README.md has {len(readme.splitlines())} lines; the site takes the rest"
    assert re.findall(r"^## (.+)$", readme, re.M) == README_SECTIONS
    assert "![" in readme.split("\n## ")[0] and "(docs/dashboard-overview.png)" in readme, "the picture comes first"
    assert "(devs/ISSUE_FORMAT.md)" in readme


def test_every_file_the_readme_links_to_exists():
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    targets = re.findall(r"\]\(([^)#]+)[^)]*\)", readme)
    assert targets and [t for t in targets if not (PROJECT / t).exists()] == []


def test_the_slow_first_order_names_test_files_that_exist():
    """A renamed or deleted file in tests/conftest.py's SLOW_FIRST would silently lose its place in the queue."""
    from tests.conftest import SLOW_FIRST

    assert len(set(SLOW_FIRST)) == len(SLOW_FIRST)
    assert [name for name in SLOW_FIRST if not (PROJECT / "tests" / name).is_file()] == []
