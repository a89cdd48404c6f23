"""The documentation site builds with `mkdocs build --strict` (a broken link, a missing anchor or a page left
out of the navigation fails it), its generated pages are generated, and nothing the README held before the
site existed was lost on the way."""
from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

PROJECT = Path(__file__).resolve().parents[2]

# Every `##`/`###` heading of the README as it was before the site took its content, each with the opening
# words of its first paragraph: both must still be found in a page of docs/ (or a file a page includes).
FORMER_README = [
    ("The two commands", "Run perfbot on its embedded"),
    ("Try the demo", "`perfbot demo PATH` (a new or empty folder; anything else is refused)"),
    ("Adopt perfbot on your runtime", "This page adopts perfbot on `tally`, a runtime kept as teams keep them"),
    ("The report format", "`devs/ISSUE_FORMAT.md` is the spec, written for the agents: YAML"),
    ("Commands", "Every command that touches the store takes `--db URL`. Without it,"),
    ("The service", "GitHub POSTs a delivery to `/webhook`. perfbot checks the"),
    ("Dedup", "The team's first rule is \"no duplicates\"; perfbot checks every report"),
    ("Verification", "A report closes only when the slowdown it describes is measured gone,"),
    ("What a report's code can reach", "Every program of a report, its C translation, every build of a fix"),
    ("What the verdicts mean", "A verdict answers the question that was asked, in the same words in"),
    ("Comment commands", "People and agents steer perfbot from the conversation where the work"),
    ("Who can make perfbot do what", "A command runs with the permission of whoever wrote its line: for a"),
    ("Dashboard", "`perfbot serve` also serves a read-only dashboard at `/dashboard/`"),
    ("The lead's view", "The weekly digest is a week late for news and says nothing of what"),
    ("Regression guards and bisection", "A verified fix can be undone by the next commit without anyone"),
    ("The weekly digest", "The team lead hears about progress without reading every issue. Once"),
    ("Parity guard", "The runtime team's rule for the CUDA port: keep the CUDA code in the"),
    ("Lint rules", "Every finding names the file, the line, the rule, the problem and the"),
    ("When the offline reading cannot decide", "Offline, `track-missing`, `backend-missing`, `threads-missing` and"),
    ("Benchmarks", "`bench/sync_scale.py` builds git repositories of generated reports,"),
    ("Deployment", "In production perfbot runs as two kinds of process sharing one"),
    ("The GitHub App", "The manifest asks for the least perfbot needs: `contents: write`"),
    ("With Docker Compose", "To rotate the webhook secret, write the new one as the first line of"),
    ("With systemd", "systemd hands each service a private copy of the secret files"),
    ("Settings for deployment", "Besides those of \"The service\" (every secret there also as"),
    ("Logs", "With `PERFBOT_LOG_FORMAT=json` every log line of `perfbot serve`,"),
    ("Metrics", "`GET /metrics` adds to the webhook and delivery counters of \"The"),
    ("What was not exercised here", "This machine has the Docker client but no Docker engine, and does not"),
    ("Layout", "`bot/` (the package: `core/` pure, `adapters/`, `services/`, `app/`, `cli/`, `demo/`),"),
]


def site_text() -> tuple[set[str], str]:
    """The headings and the prose (whitespace folded) of every page, with the files pages include."""
    headings, texts = set(), []
    for page in sorted((PROJECT / "docs").glob("*.md")):
        text = page.read_text(encoding="utf-8")
        for included in re.findall(r'^--8<-- "([^"]+)"$', text, re.M):
            text += "\n" + (PROJECT / included).read_text(encoding="utf-8")
        headings |= set(re.findall(r"^#{1,4} (.+?)\s*$", text, re.M))
        texts.append(" ".join(text.split()))
    return headings, "\n".join(texts)


@pytest.mark.parametrize("heading, opening", FORMER_README, ids=[h for h, _ in FORMER_README])
def test_every_section_of_the_former_readme_is_in_the_site(heading, opening):
    headings, text = site_text()
    assert heading in headings, f"no page of docs/ has a heading {heading!r}"
    assert opening in text, f"the section {heading!r} (it opened with {opening!r}) is in no page of docs/"


def test_the_site_builds_strict_with_its_generated_pages(tmp_path):
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1"}
    built = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path)],
                           cwd=PROJECT, env=env, capture_output=True, text=True, timeout=300)
    assert built.returncode == 0, "mkdocs build --strict failed (./test.sh installs the docs extra):\n" \
        + built.stdout + built.stderr
    commands = (tmp_path / "commands" / "index.html").read_text(encoding="utf-8")
    assert "Usage: perfbot verify [OPTIONS] SLUG" in commands and "Usage: perfbot config reference" in commands
    assert "open|regressed|fixed|closed|merged|deleted|all" in commands and "\\|" not in commands, \
        "a table's escaped pipe shows"
    adopt = (tmp_path / "adopt" / "index.html").read_text(encoding="utf-8")  # long command lines wrap, not cut off
    assert "stylesheets/extra.css" in adopt and "white-space: pre-wrap" in (tmp_path / "stylesheets" /
                                                                           "extra.css").read_text(encoding="utf-8")
    configuration = (tmp_path / "configuration" / "index.html").read_text(encoding="utf-8")
    assert "max_samples" in configuration and "generated: config-reference" not in configuration
    assert "Performance report format" in (tmp_path / "format-spec" / "index.html").read_text(encoding="utf-8")


def test_the_docs_are_served_beside_the_dashboard_and_the_readme_says_how_to_get_perfbot_on_path():
    from bot.config import DEFAULT_BIND

    served = re.search(r"^dev_addr: (\S+)", (PROJECT / "mkdocs.yml").read_text(encoding="utf-8"), re.M)
    assert served and served.group(1).rsplit(":", 1)[1] != DEFAULT_BIND.rsplit(":", 1)[1]
    readme = (PROJECT / "README.md").read_text(encoding="utf-8")
    assert f"mkdocs serve      # http://{served.group(1)}/" in readme
    assert "`pipx install .`" in readme and "`uv tool install .`" in readme
    assert 'export PATH="$PWD/.venv/bin:$PATH"' in readme.replace("\n", " ")
