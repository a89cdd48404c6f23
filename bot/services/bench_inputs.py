"""What a bench run reads before it measures: the repository's `.perfbot.toml` (from the default branch), the
report, and the options a command gave; shared by the local, ssh and Actions paths."""
from __future__ import annotations

import dataclasses

from bot.adapters.git import GitRepository
from bot.core.parse import parse
from bot.core.records import REPORT_DIR, PerfIssue
from bot.core.repo_config import ConfigFileError, RepoConfig, parse_repo_config
from bot.errors import UserError

FIX, REPRODUCE = "fix", "reproduce"


def read_config(repo: GitRepository, sha: str) -> RepoConfig:
    """`.perfbot.toml` of the default branch: a PR must not choose its own bench hosts or thresholds."""
    text = (repo.read_file(sha, ".perfbot.toml") or b"").decode("utf-8", "replace")
    try:
        return parse_repo_config(text)
    except ConfigFileError as exc:
        raise UserError(f"cannot verify: {exc}") from None


def read_record(repo: GitRepository, slug: str, *shas: str) -> PerfIssue:
    path = f"{REPORT_DIR}/{slug}.md"
    for sha in shas:
        data = repo.read_file(sha, path)
        if data is not None:
            record = parse(path, data).record
            if record is not None:
                return record
    raise UserError(f"cannot verify {slug}: {path} is not on the default branch or the head")


def with_options(config: RepoConfig, options: dict) -> RepoConfig:
    """A command's samples=N caps the plan (and lowers its minimum to match)."""
    samples = options.get("samples")
    if not samples:
        return config
    return dataclasses.replace(config, max_samples=samples, min_samples=min(config.min_samples, samples))
