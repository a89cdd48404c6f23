"""`perfbot parity PATH...`: lint-like exit codes and output, the repository's [parity], --base as a PR would."""
from __future__ import annotations

import json

from click.testing import CliRunner

from bot.cli import main
from tests.gitrepo import RepoBuilder
from tests.parity.test_parity import CUDA_ADD, NAMES, marked

KERNELS = "runtime/gpu/kernels.h"


def project(tmp_path, config: str = '[parity]\nfiles = ["runtime/gpu/*.h"]\n' + NAMES) -> RepoBuilder:
    repo = RepoBuilder(tmp_path / "project")
    repo.write(".perfbot.toml", config).write(KERNELS, marked()).write("runtime/gpu/notes.txt", "no code\n")
    repo.commit("kernels")
    return repo


def run(*args: str):
    return CliRunner().invoke(main, ["parity", *args])


def test_a_clean_folder_exits_0_and_counts_its_pairs(tmp_path):
    repo = project(tmp_path)
    result = run(str(repo.root / "runtime"))
    assert result.exit_code == 0, result.output
    assert result.output.strip() == "1 file(s) checked: 1 twin pair(s), 0 problem(s)"


def test_a_drifted_twin_exits_1_with_the_place_in_text_and_json(tmp_path):
    repo = project(tmp_path)
    (repo.root / KERNELS).write_text(marked(cuda_body=CUDA_ADD.replace("__syncthreads();", "return;")))
    result = run(str(repo.root / KERNELS))
    assert result.exit_code == 1
    first = result.output.splitlines()[0]
    assert first.startswith(f"{KERNELS}:8: error [drifted-twin] twins `vector_add` drifted: Metal block")
    assert "where CUDA has jump `return`" in first
    data = json.loads(run(str(repo.root / KERNELS), "--format", "json").output)
    assert data["ok"] is False and data["findings"][0]["locations"][1] == {"path": KERNELS, "line": 18, "end_line": 18}


def test_base_flags_a_twin_changed_on_one_side_since_that_ref(tmp_path):
    repo = project(tmp_path)
    (repo.root / KERNELS).write_text(marked(cuda_body=CUDA_ADD.replace("i < 64", "i < 16")))
    assert run(str(repo.root / KERNELS)).exit_code == 0  # the shapes still agree
    result = run(str(repo.root / KERNELS), "--base", "main")
    assert result.exit_code == 1 and "[one-sided-change] this change edits the CUDA block `vector_add`" in result.output
    assert run(str(repo.root / KERNELS), "--base", "no-such-branch").exit_code == 1


def test_bad_settings_and_empty_folders_are_usage_errors(tmp_path):
    repo = project(tmp_path, '[parity]\nfiles = ["runtime/gpu/*.h"]\nstyle = "regex"\n')
    result = run(str(repo.root / KERNELS))
    assert result.exit_code == 2 and ".perfbot.toml: 3: parity.style: 'regex' is not one of" in result.output
    (repo.root / "empty").mkdir()
    good = project(tmp_path / "other")
    (good.root / "docs").mkdir()
    (good.root / "docs" / "x.h").write_text("int x;\n")
    result = run(str(good.root / "docs"))
    assert result.exit_code == 2 and "no files to check in this folder match [parity] files" in result.output


def test_outside_a_repository_the_defaults_apply_and_config_can_be_named(tmp_path):
    (tmp_path / "k.cu").write_text(marked("a", "b"))
    result = run(str(tmp_path / "k.cu"))
    assert result.exit_code == 1 and result.output.count("[missing-twin]") == 2
    (tmp_path / "conf.toml").write_text('[parity]\nfiles = ["*.cu"]\nmetal = "@mtl"\n')
    result = run(str(tmp_path / "k.cu"), "--config", str(tmp_path / "conf.toml"))
    # @metal is not this project's tag: only the CUDA block is seen, and it lacks its twin
    assert result.exit_code == 1 and result.output.count("[missing-twin]") == 1 and "CUDA block `b`" in result.output
