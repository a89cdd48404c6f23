"""test_verify_runtime.py's tests on the ssh runner against the loopback sshd: a file of its own so that xdist runs
them beside the local ones (they are the suite's longest, every run crossing ssh)."""
from __future__ import annotations

import pytest

from bot.core.config import parse_repo_config
from tests.runtime_project import build_runtime_project, config
from tests.verify.test_ssh_runner import _runner
from tests.verify.test_verify_runtime import *  # noqa: F403 - the same tests, collected here with the fixture below


@pytest.fixture(scope="module")
def project(sshd, tmp_path_factory):
    root = tmp_path_factory.mktemp("runtime-ssh")
    repo, heads, _other = build_runtime_project(root)
    runner = _runner(sshd, f"remote-{root.name}", repo_path=repo.root, build=parse_repo_config(config()).build.argv,
                     memory_mb=512)
    yield heads, runner
    runner.close()
