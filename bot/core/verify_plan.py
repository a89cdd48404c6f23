"""A verification's plan, decided without I/O: the report's two programs, and argument templates filled so
that no text a report carries can change how many arguments a command gets."""
from __future__ import annotations

from bot.core.records import PerfIssue
from bot.core.repo_config import RepoConfig
from bot.errors import UserError


def fill(template: tuple[str, ...], **values: str) -> list[str]:
    """Placeholders filled by plain substitution: each stays one argument whatever its text."""
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def programs(record: PerfIssue, config: RepoConfig) -> tuple[str, str]:
    """The report's program and C translation, or a UserError that says what a plan for it lacks."""
    if record.track == "par" and (record.threads or 1) < 2:
        raise UserError(f"{record.slug} is a par report without a thread count above 1; set `threads:`")
    language = next((b.code for b in record.code_blocks if b.lang == "language"), None)
    translation = next((b.code for b in record.code_blocks if b.lang == "c"), None)
    if language is None or translation is None or config.run_language is None:
        missing = "the program" if language is None else "the C translation" if translation is None else \
            "[run] language in .perfbot.toml"
        raise UserError(f"cannot verify {record.slug}: {missing} is missing")
    return language, translation


def from_root(argv: list[str], workspace) -> list[str]:
    return [str(workspace / arg[2:]) if arg.startswith("./") else arg for arg in argv]
