"""Write the demo project as a real git repository: main with the runtime and reports (one of them fixed by a
commit merged into main, which its `fix:` names), a fix branch, runtime v1 on branch v1, and a branch that
breaks the parity of the GPU twins."""
from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import git

from bot.demo.parity import KERNELS, KERNELS_BROKEN, KERNELS_PATH, PARITY_BRANCH, PARITY_CONFIG, README_PART
from bot.demo.reports import (
    FIX_BRANCH,
    FIXED_SLUG,
    MERGED_SLUG,
    OPEN_SLUG,
    REFERENCE_BRANCH,
    REFERENCE_SLUG,
    REPORTS,
    xor_report,
)
from bot.demo.sources import CONFIG, GITIGNORE, README, RUNTIME_FIX, RUNTIME_MAIN, RUNTIME_V1, RUNTIME_XOR_BITS
from bot.errors import Invalid

BRANCH = "main"
AUTHOR = git.Actor("perfbot demo", "demo@perfbot.invalid")
# Fixed dates (and a fixed author) make every demo the same commits, shas included, wherever it is made.
EPOCH = datetime(2026, 1, 5, 9, 0, tzinfo=UTC)


@dataclass(frozen=True)
class DemoInfo:
    path: Path
    branch: str
    fix_branch: str
    fixed_slug: str
    open_slug: str
    files: tuple[str, ...]
    heads: dict[str, str] = field(default_factory=dict)  # branch -> commit sha
    reference_slug: str = REFERENCE_SLUG  # the report that compares with runtime v1 (branch reference_branch)
    reference_branch: str = REFERENCE_BRANCH
    merged_slug: str = MERGED_SLUG  # the report whose `fix:` names a commit already in main
    merged_fix: str = ""  # that commit


def create_demo(path: Path) -> DemoInfo:
    """Create the demo repository at `path`, which must be missing or an empty folder."""
    path = Path(path)
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise Invalid(f"{path} already exists and is not an empty folder", "give a new or empty folder for the demo")
    repo = git.Repo.init(path, initial_branch=BRANCH)
    try:
        writer = Writer(repo, path)
        readme = README.format(fix_branch=FIX_BRANCH, fixed_slug=FIXED_SLUG, open_slug=OPEN_SLUG,
                               reference_branch=REFERENCE_BRANCH, reference_slug=REFERENCE_SLUG,
                               merged_slug=MERGED_SLUG) + README_PART
        main_files = {"README.md": readme, ".gitignore": GITIGNORE, "runtime.c": RUNTIME_MAIN,
                      ".perfbot.toml": CONFIG + PARITY_CONFIG, KERNELS_PATH: KERNELS}
        writer.commit({**main_files, "runtime.c": RUNTIME_V1},
                      "runtime v1: a one-statement interpreter standing in for the language runtime")
        v1 = repo.head.commit.hexsha
        repo.git.branch(REFERENCE_BRANCH)
        writer.commit({"runtime.c": RUNTIME_XOR_BITS},
                      "runtime: one u24 remainder routine, shared with the GPU backends")
        reports = {f"devs/issues/{slug}.md": make() for slug, make in REPORTS.items()}
        for name, text in reports.items():
            writer.commit({name: text}, f"report {Path(name).stem}")
        # The xor report was filed, then fixed on main; the report names the fix commit: "fixed in main since".
        merged_fix = writer.commit({"runtime.c": RUNTIME_MAIN},
                                   f"runtime: xor with the C backend's `^`\n\nFixes {MERGED_SLUG}.")
        merged_report = f"devs/issues/{MERGED_SLUG}.md"
        writer.commit({merged_report: xor_report(merged_fix[:12])}, f"report {MERGED_SLUG}: fixed by {merged_fix[:12]}")
        main = repo.head.commit.hexsha
        repo.git.checkout("-q", "-b", FIX_BRANCH)
        fix = writer.commit({"runtime.c": RUNTIME_FIX},
                            f"runtime: keep the sum's accumulator unboxed\n\nFixes {FIXED_SLUG}.")
        repo.git.checkout("-q", BRANCH)
        repo.git.checkout("-q", "-b", PARITY_BRANCH)
        broken = writer.commit({KERNELS_PATH: KERNELS_BROKEN}, "gpu: CUDA threads past the end leave early")
        repo.git.checkout("-q", BRANCH)
    finally:
        repo.close()
    return DemoInfo(path.resolve(), BRANCH, FIX_BRANCH, FIXED_SLUG, OPEN_SLUG,
                    tuple(sorted([*main_files, *reports])),
                    {BRANCH: main, FIX_BRANCH: fix, REFERENCE_BRANCH: v1, PARITY_BRANCH: broken},
                    merged_fix=merged_fix)


class Writer:
    """Commits files to the checked-out branch, each commit an hour after the previous one."""

    def __init__(self, repo: git.Repo, root: Path) -> None:
        self.repo, self.root, self.tick = repo, root, 0

    def commit(self, files: dict[str, str], message: str) -> str:
        for name, text in files.items():
            target = self.root / name
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8")
        self.repo.index.add(list(files))
        self.tick += 1
        when = f"{int((EPOCH + timedelta(hours=self.tick)).timestamp())} +0000"
        commit = self.repo.index.commit(message, author=AUTHOR, committer=AUTHOR, author_date=when,
                                        commit_date=when)
        return commit.hexsha
