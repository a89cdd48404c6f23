"""The fixes `perfbot check` proposes beyond one report: the build script for every revision (a define the old
commit calls otherwise, an option its runtime does not take yet) and the define that sizes a heap reservation."""
from __future__ import annotations

import re
from collections.abc import Callable
from typing import TYPE_CHECKING

from bot.core.config import PerfbotFile
from bot.core.config import check_advice as advice
from bot.core.verify.failures import Failure, Kind, option_base
from bot.services.adopt import workspace as workspace_files

if TYPE_CHECKING:
    from bot.services.adopt.check import CheckResult, ReportCheck

# A callable that names the commit after `sha` up to the default branch that introduced a text (`git log -S`).
Introduced = Callable[[str], str | None]


def build_fixes(config: PerfbotFile, index, failure: str, older: bool) -> list[str]:
    if config.build_script is not None:
        return [f"the build script {config.build_script.path} ({advice.place(index, 'build', 'script')}) fails "
                "at this commit: make it handle this revision too (it gets the checkout as $1, the commit as $2)"]
    if not older:
        return [f"set {advice.place(index, 'build', 'command')} to the command that builds the runtime in its "
                "checkout, e.g. [\"make\"]"]
    return _script_fixes(index, advice.build_script(config.build.argv, failure))


_SCRIPT_FIX = "commit .perfbot/build.sh (chmod +x) reading:\n"


def script_of(fixes: list[str]) -> str | None:
    return next((fix.removeprefix(_SCRIPT_FIX) + "\n" for fix in fixes if fix.startswith(_SCRIPT_FIX)), None)


def _script_fixes(index, script: str) -> list[str]:
    return ["this commit does not work with the default branch's build: keep a script on the default branch "
            "that builds every revision (and drop [build] command: the script gets the checkout and the commit); "
            + advice.write_in(index, "build", ['script = ".perfbot/build.sh"']),
            _SCRIPT_FIX + script.rstrip("\n")]


def older_fixes(config: PerfbotFile, index, result: CheckResult, workspace, introduced: Introduced | None,
                help_text: str = "") -> list[str]:
    """Runs that fail at an old commit while it builds: what differs from the default branch (a flag its
    runtime does not take yet, a define it calls by another name) goes into a per-revision build script.
    A flag is new when the runtime rejected it, when the old sources lack the `"-T` the default branch added,
    or when the old runtime's `--help` (`help_text`) lists options but not this one and a later commit added it."""
    failed = [r for r in result.reports if r.failure is not None]
    if not failed or config.run.language is None:
        return []
    sources = workspace_files.sources(workspace)
    runtime = config.run.language[0].removeprefix("./")
    rejected = {option_base(r.failure.flag) for r in failed if r.failure and r.failure.flag}
    flags: dict[str, tuple[str, str, str]] = {}
    options = language_options(config.run.language)
    usage = help_text if re.search(r"usage|options", help_text, re.IGNORECASE) else ""
    for flag in options:
        since = introduced(f'"{flag}') if introduced else None
        unlisted = bool(usage) and not re.search(rf"(?<![\w-]){re.escape(flag)}(?![a-z_-])", usage)
        # getopt's "T:" and a long option's table hold no `"-T`: the commit that added the flag's text then.
        since = since or (introduced(flag) if introduced and (flag in rejected or unlisted) else None)
        # New since this commit: the runtime said so, its sources here lack the option the default branch added,
        # or its help here does not list it.
        unquoted = bool(sources) and not any(f'"{flag}' in text for text in sources.values())
        # A build script may drop the flag already: then only the runtime's own refusal says it does not.
        if flag in rejected or (since and (unlisted or unquoted) and config.build_script is None):
            flags[flag] = (flag, runtime, since or "a later commit")
            for report in failed:
                report.fixes.insert(0, f"{flag} is in [run] language, and the runtime takes it only "
                                       f"{'since ' + since if since else 'at later commits'}: the build script "
                                       "below drops it at older commits")
    renamed = _renamed_define(config.build.argv, sources)
    if renamed is None:  # the same define sizes the heap here: the fix is the default branch's, at this commit too
        for report in failed:
            if report.failure and report.failure.kind in (Kind.RESERVATION, Kind.ADDRESS_SPACE):
                heap_fix(report, report.failure, config, index, sources)
    if config.build_script is not None:
        if flags or renamed:
            return [f"the build script {config.build_script.path} ({advice.place(index, 'build', 'script')}) "
                    "builds this commit, but its runs fail: make it handle " + ", ".join(
                        [*(f"the missing {f}" for f in flags), *([f"the define {renamed}"] if renamed else [])])]
        return []
    if not flags and not renamed:
        return []
    return _script_fixes(index, advice.build_script(config.build.argv, "", renamed=renamed,
                                                    flags=tuple(flags.values()),
                                                    lone=tuple(f for f in flags if not options[f])))


def language_options(language: tuple[str, ...]) -> dict[str, bool]:
    """The options `[run] language` passes, each with whether a value goes with it: `-T {threads}` and the glued
    `-T{threads}`, `--threads={threads}`, `--mem=2G` (True), `-s` before `{file}` (False)."""
    found: dict[str, bool] = {}
    for arg, following in zip(language, (*language[1:], ""), strict=True):
        bare = re.fullmatch(r"-{1,2}[A-Za-z][\w-]*", arg)
        glued = re.match(r"(-{1,2}[A-Za-z][\w-]*?)(?:=|\{)", arg)
        if glued:
            found.setdefault(option_base(glued.group(1)), True)
        elif bare:
            found.setdefault(arg, bool(following) and not following.startswith("-") and "{file}" not in following)
    return found


def _renamed_define(build: tuple[str, ...] | None, sources: dict[str, str]) -> str | None:
    """A define the build passes that this checkout does not know, and the one it guards on instead (the
    guarded name sharing most words with it; an include guard is none)."""
    for name in advice.build_defines(build):
        if sources and not any(name in text for text in sources.values()):
            words = set(name.split("_"))
            guarded = {other for text in sources.values()
                       for other in re.findall(r"#\s*if(?:n?def)?\s+(?:defined\s*\(?\s*)?([A-Z_][A-Z0-9_]{2,})", text)
                       if words & set(other.split("_")) and not other.endswith("_H")}
            if guarded:
                return max(sorted(guarded), key=lambda other: len(words & set(other.split("_"))))
    return None


def heap_fix(result: ReportCheck, failure: Failure, config: PerfbotFile, index, sources: dict[str, str]) -> None:
    """The define that sized the reservation the failure names, made a quarter of the memory cap in the build."""
    found = advice.heap_define(sources, failure.reserved_mb) if failure.reserved_mb is not None else None
    if found is None:
        return
    name, _, unit = found
    target = min(config.verify.memory_mb, failure.reserved_mb or 0) // 4
    command = advice.with_define(config.build.argv, name, max(1, (target << 20) // unit)) if config.build.argv else None
    if command:
        result.fixes.append(f"{name} sizes that reservation; pass a smaller one in the build (a quarter of the "
                            f"{config.verify.memory_mb} MB cap); "
                            + advice.write_in(index, "build", [f"command = {advice.toml_list(command)}"]))
    else:
        result.fixes.append(f"{name} sizes that reservation: build with -D{name}=<smaller> "
                            f"({advice.place(index, 'build', 'command')} or its script)")
