"""Integrity of the dedup evaluation set in tests/data/dedup: reports lint, pairs are well formed, C runs."""
from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from bot.core.lint.rules import lint_bytes
from bot.core.reports.parse import parse
from bot.core.reports.records import Severity

PROJECT = Path(__file__).resolve().parents[2]
DATASET = PROJECT / "tests" / "data" / "dedup"
REPORTS = DATASET / "devs" / "issues"
PAIRS = DATASET / "pairs.json"

LABELS = {"duplicate", "subsumes", "overlaps", "distinct"}
OVERLAPPING = {"duplicate", "subsumes", "overlaps"}
PAIR_KEYS = {"a", "b", "label", "hard_negative", "why"}
# Every report says what both programs print: "Both print `8388608`."
_PRINTS = re.compile(r"\bprints?\s+`([^`]+)`")
# -O1 keeps the compile loop fast. -O2 (what the reports use) turns the translations' tail calls into
# jumps; -O1 does not unless asked, and a 16M-iteration tail loop would overflow the stack.
_GCC = ["gcc", "-O1", "-foptimize-sibling-calls", "-w"]
RUN_TIMEOUT = 5.0


def _report_paths() -> list[Path]:
    return sorted(REPORTS.glob("perf_*.md"))


def _rel(path: Path) -> str:
    return path.relative_to(PROJECT).as_posix()


def _record(path: Path):
    return parse(_rel(path), path.read_bytes()).record


def _pairs() -> list[dict]:
    return json.loads(PAIRS.read_text(encoding="utf-8"))


def test_every_report_lints_without_errors():
    paths = _report_paths()
    assert paths, f"no reports under {REPORTS}"
    errors = [f"{f.file}:{f.line} {f.rule}: {f.message}"
              for path in paths for f in lint_bytes(_rel(path), path.read_bytes())
              if f.severity is Severity.ERROR]
    assert not errors, "\n".join(errors)


def test_reports_are_well_formed_for_the_set():
    for path in _report_paths():
        record = _record(path)
        assert record is not None, path.name
        assert record.slug == path.stem
        assert record.supersedes == (), f"{path.name}: supersedes must stay empty"
        assert len(record.blocks("language")) == 1, f"{path.name}: one program in the language"
        assert len(record.blocks("c")) == 1, f"{path.name}: one C translation"
        assert 100 <= record.prose_words <= 300, f"{path.name}: {record.prose_words} prose words"
        assert _PRINTS.search(path.read_text(encoding="utf-8")), f"{path.name}: no 'print(s) `VALUE`'"


def test_counts_and_mix():
    records = [_record(path) for path in _report_paths()]
    assert len(records) >= 40
    assert {r.track for r in records} == {"seq", "par"}
    assert {r.backend for r in records if r.track == "par"} == {"c", "metal", "cuda"}
    assert any(not r.has_front_matter for r in records), "some reports state their facts in prose"
    pairs = _pairs()
    assert sum(p["label"] in OVERLAPPING for p in pairs) >= 15
    assert sum(p["label"] == "distinct" and p["hard_negative"] for p in pairs) >= 10


def test_pairs_are_valid():
    slugs = {path.stem for path in _report_paths()}
    seen: set[frozenset[str]] = set()
    for pair in _pairs():
        assert set(pair) == PAIR_KEYS, pair
        a, b = pair["a"], pair["b"]
        assert a in slugs, f"unknown slug {a}"
        assert b in slugs, f"unknown slug {b}"
        assert a != b, pair
        key = frozenset((a, b))
        assert key not in seen, f"pair listed twice: {a} / {b}"
        seen.add(key)
        assert pair["label"] in LABELS, pair
        assert isinstance(pair["hard_negative"], bool), pair
        assert not pair["hard_negative"] or pair["label"] == "distinct", f"hard negatives are distinct: {pair}"
        assert isinstance(pair["why"], str) and pair["why"].strip(), pair


def test_c_translations_compile_run_and_print_the_stated_value(tmp_path):
    gcc = shutil.which("gcc")
    assert gcc, "gcc is required to check the C translations"
    paths = _report_paths()

    def check(path: Path) -> str | None:
        code = _record(path).blocks("c")[0].code
        source, binary = tmp_path / f"{path.stem}.c", tmp_path / path.stem
        source.write_text(code, encoding="utf-8")
        built = subprocess.run([*_GCC, str(source), "-o", str(binary)], capture_output=True, text=True)
        if built.returncode != 0:
            return f"{path.name}: gcc failed:\n{built.stderr[:2000]}"
        try:
            ran = subprocess.run([str(binary)], capture_output=True, text=True, timeout=RUN_TIMEOUT)
        except subprocess.TimeoutExpired:
            return f"{path.name}: still running after {RUN_TIMEOUT:g} s"
        if ran.returncode != 0:
            return f"{path.name}: exit status {ran.returncode}"
        stated = set(_PRINTS.findall(path.read_text(encoding="utf-8")))
        printed = ran.stdout.strip()
        if stated != {printed}:
            return f"{path.name}: printed {printed!r}, the report says {sorted(stated)}"
        return None

    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        problems = [p for p in pool.map(check, paths) if p]
    assert not problems, "\n".join(problems)
