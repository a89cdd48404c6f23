"""What each command loads before it works: `--help`, offline `lint` and offline `dedup` import no more than
they need (the anthropic SDK alone costs 1.7 s), and these sets may shrink but never silently grow."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PROBE = """
import json, sys
from bot.cli import main
try:
    main.main(sys.argv[1:], prog_name="perfbot", standalone_mode=False)
except SystemExit:
    pass
print(json.dumps(sorted({m.split(".")[0] for m in sys.modules} - set(sys.stdlib_module_names))), file=sys.stderr)
"""
# Third-party packages each may load. Growing one of these is a decision: make it here, with its cost.
ALLOWED = {
    "help": {"bot", "click"},
    "lint": {"bot", "click", "git", "gitdb", "smmap", "markdown_it", "mdit_py_plugins",
             "mdurl", "sqlalchemy", "typing_extensions", "yaml", "greenlet",
             # the repository's .perfbot.toml, for how it reads reports (about 0.15 s)
             "pydantic", "pydantic_core", "annotated_types", "typing_inspection",
             # the operator's settings, one typed model on pydantic-settings (about 0.07 s over pydantic)
             "pydantic_settings", "dotenv"},
}
ALLOWED["dedup"] = ALLOWED["lint"] | {"alembic", "mako", "markupsafe", "numpy", "scipy", "datasketch", "pygments",
                                     "jsonschema", "jsonschema_specifications", "referencing", "rpds", "attrs",
                                     "attr", "rfc3339_validator", "six", "charset_normalizer", "idna"}
NEVER = {"anthropic", "github", "flask", "werkzeug", "apscheduler", "matplotlib", "requests", "httpx"}


def loaded(*args: str, cwd: Path) -> set[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PERFBOT_", "ANTHROPIC_"))}
    env.update(PERFBOT_INSTANCE_DIR=str(cwd / "instance"), PYTHONPATH=str(ROOT))
    done = subprocess.run([sys.executable, "-c", PROBE, *args], cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=120)
    return {m for m in json.loads(done.stderr.strip().splitlines()[-1]) if not m.startswith("_")}


@pytest.fixture(scope="module")
def demo(tmp_path_factory):
    from bot.demo.create import create_demo

    folder = tmp_path_factory.mktemp("cli-imports")
    create_demo(folder / "demo")
    return folder


@pytest.mark.parametrize("command", ["help", "lint", "dedup"])
def test_a_command_loads_only_what_it_needs(command, demo):
    report = next((demo / "demo" / "devs" / "issues").glob("perf_*.md"))
    args = {"help": ["--help"], "lint": ["lint", str(report)],
            "dedup": ["dedup", "--repo", str(demo / "demo"), str(report)]}[command]
    modules = loaded(*args, cwd=demo)
    assert not modules & NEVER, modules & NEVER
    assert modules <= ALLOWED[command] | {"cython_runtime"}, sorted(modules - ALLOWED[command])


def test_each_command_runs_with_the_help_line_the_list_shows():
    from bot.cli import COMMANDS, main

    for name, (_, short) in COMMANDS.items():
        assert main.get_command(None, name).get_short_help_str(limit=200) == short
