"""A reference implementation made ready for verification: its commit resolved, built on the same runner, the
report's program written into its own run folder."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from bot.adapters.reference_repos import reference_repository, resolve_in
from bot.core.config import PerfbotFile, Reference, fill
from bot.core.reports.records import PerfIssue
from bot.core.verify.verify_plan import Folder, from_root, program_name, with_input


@dataclass(frozen=True)
class ReferenceTarget:
    label: str  # NAME@ref (sha12), shown next to the numbers
    sha: str
    factor: float
    template: tuple[str, ...]
    program: object  # path of the program file on the runner
    workspace: Folder
    folder: object

    def argv(self, given: str | None, threads: str) -> list[str]:
        return from_root(fill(with_input(self.template, given), file=str(self.program), threads=threads),
                         self.workspace)


def prepare_reference(reference: Reference, runner, record: PerfIssue, language: str,
                      config: PerfbotFile) -> ReferenceTarget:
    """Build the reference at its ref (reused when built before) and put the program in its run folder."""
    project = Path(runner.repo_path)
    path = reference_repository(reference.repository, project, reference.name, config.operator.reference_sources)
    sha = resolve_in(path, reference.branch, reference.name)
    same = path == project and reference.build == config.build.argv
    # Workspaces are keyed by commit; another repository or build gets its own folder of them (for_project).
    builder = runner if same else runner.for_project(path, reference.build)
    workspace = builder.prepare(sha)
    folder = builder.run_dir(workspace, record.slug)
    program = folder / (reference.program or program_name(record, config))
    builder.write_file(program, language)
    return ReferenceTarget(f"{reference.name}@{reference.branch or 'HEAD'} ({sha[:12]})", sha,
                           reference.factor or config.verify.reference_factor,
                           reference.run, program, workspace, folder)

