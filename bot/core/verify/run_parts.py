"""A bench run's three JSON columns, typed: where a running run is (RunProgress), what was asked of it and what
happened to it since (RunOptions), and what it measured (RunResult, one SideResult per side).

Each class spells its column's JSON shape once: `from_json` reads what any version stored (a key missing takes
its default, a null its absence), `as_dict` writes it, key for key as it was written before these types. The store
parses a row once (bench_store.to_run) and writes only these. The suite is suite.SuiteResult itself; a side's sweep and
GPU modes are sweep_result.SweepSummary and GpuSummary; one sub-document stays as the module that makes it spells
it: a side's per-sample records (services/bench/measures.py).
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from bot.core.verify.claim_size import ClaimSize
from bot.core.verify.interval import Interval
from bot.core.verify.sweep_result import GpuSummary, SweepSummary
from bot.core.verify.sweep_result import json_list as _list
from bot.core.verify.sweep_result import json_mapping as _mapping

if TYPE_CHECKING:
    from bot.core.verify.suite import SuiteResult

Json = Mapping[str, Any]


@dataclass(frozen=True)
class RunProgress:
    """Where a running run is: the side it samples, pairs taken of at most `most`; or a note while it is elsewhere."""

    side: str = ""  # "" while it builds and warms up
    taken: int = 0
    most: int = 0
    note: str = ""  # "dispatched to GitHub Actions"

    @classmethod
    def from_json(cls, data: object) -> RunProgress:
        found = _mapping(data)
        return cls(str(found.get("side") or ""), int(found.get("taken") or 0), int(found.get("most") or 0),
                   str(found.get("note") or ""))

    def as_dict(self) -> dict[str, Any]:
        pairs = (("side", self.side), ("taken", self.taken), ("most", self.most), ("note", self.note))
        return {key: value for key, value in pairs if value}


@dataclass(frozen=True)
class Follower:
    """A command's answer line that keeps current with a run: the answer's id and the line's index."""

    id: int
    index: int


@dataclass(frozen=True)
class ActionsDispatch:
    """Where a run sent to GitHub Actions went: its workflow file and when it was dispatched."""

    workflow: str
    dispatched_at: datetime


@dataclass(frozen=True)
class RunOptions:
    """What a run was asked (a command's `runner=`, `samples=`; a claim check's fingerprint; a fix in main) and
    what happened to it since (re-measures of a noisy verdict, the answer lines that follow it, a dispatch)."""

    runner: str | None = None  # the runner named, None to let the report's backend choose
    samples: int | None = None  # caps the sampling plan (bench_inputs.with_options)
    claim: str | None = None  # a claim check: the fingerprint of the claim measured (verify_plan.claim_fingerprint)
    in_main: bool = False  # a fix measured where it is already on the default branch
    noisy_tries: int = 0  # how many times it was measured again because its host was busy
    remeasure_at: datetime | None = None  # a noisy verdict is shown; the measurement that replaces it is due then
    answers: tuple[Follower, ...] = ()
    actions: ActionsDispatch | None = None  # set once dispatched to GitHub Actions

    @classmethod
    def from_json(cls, data: object) -> RunOptions:
        found = _mapping(data)
        sent = _mapping(found.get("actions"))
        due = found.get("remeasure_at")
        return cls(runner=found.get("runner") or None, samples=int(found["samples"]) if found.get("samples") else None,
                   claim=found.get("claim") or None, in_main=bool(found.get("in_main")),
                   noisy_tries=int(found.get("noisy_tries") or 0),
                   remeasure_at=datetime.fromisoformat(due) if due else None,
                   answers=tuple(Follower(int(f["id"]), int(f["index"])) for f in _list(found.get("answers"))),
                   actions=ActionsDispatch(str(sent.get("workflow") or ""),
                                           datetime.fromisoformat(sent["dispatched_at"]))
                   if sent.get("dispatched_at") else None)

    def as_dict(self) -> dict[str, Any]:
        """Only what is set: a run queued without options stores `{}`."""
        pairs = (("runner", self.runner), ("samples", self.samples), ("claim", self.claim),
                 ("in_main", self.in_main), ("noisy_tries", self.noisy_tries),
                 ("remeasure_at", self.remeasure_at.isoformat() if self.remeasure_at else None),
                 ("answers", [{"id": f.id, "index": f.index} for f in self.answers]),
                 ("actions", {"workflow": self.actions.workflow,
                              "dispatched_at": self.actions.dispatched_at.isoformat()} if self.actions else None))
        return {key: value for key, value in pairs if value}


@dataclass(frozen=True)
class SideResult:
    """What one commit measured for one input (services/bench/verify.Side, as stored). `first` and `second` are
    the two programs' measures per sample: the language and C (or the reference) for a seq report, one thread
    and N threads for a par one (`par`, which names them in JSON)."""

    side: str  # base | head
    sha: str = ""
    first: tuple[float, ...] = ()
    second: tuple[float, ...] = ()
    par: bool = False
    interval: Interval | None = None
    decision: str = ""  # pass | fail | inconclusive | implausible once decided; "" while sampling
    output: str = ""
    input: str | None = None
    against: str = "C"  # C | reference NAME@sha | N threads
    measure: str | None = "wall"  # None: stored before measures, so wall seconds (units.unit_of)
    factor: float | None = None  # a reference: the factor of it the program must stay within
    language_runs: tuple[Json, ...] = ()  # per sample: times, faults, metrics (services/bench/measures.py)
    c_runs: tuple[Json, ...] = ()
    language_metrics: Json = field(default_factory=dict)  # the runtime's counters, median per name
    c_metrics: Json = field(default_factory=dict)
    sweep: SweepSummary | None = None  # par: scaling.summary of every thread count
    gpu: GpuSummary | None = None  # a GPU report: gpu_modes.modes_summary

    @property
    def samples(self) -> int:
        return min(len(self.first), len(self.second))

    @classmethod
    def from_json(cls, data: object) -> SideResult:
        found = _mapping(data)
        par = "one_thread_seconds" in found
        first, second = ("one_thread_seconds", "n_threads_seconds") if par else ("language_seconds", "c_seconds")
        given = found.get("input")
        metrics = _mapping(found.get("metrics"))
        factor = found.get("factor")
        return cls(side=str(found.get("side") or "?"), sha=str(found.get("sha") or ""),
                   first=tuple(_list(found.get(first))), second=tuple(_list(found.get(second))), par=par,
                   interval=Interval.from_json(found.get("interval")), decision=str(found.get("decision") or ""),
                   output=str(found.get("output") or ""),
                   input=" ".join(map(str, given)) if isinstance(given, list) else (str(given) if given else None),
                   against=str(found.get("against") or "C"), measure=found.get("measure") or None,
                   factor=factor if isinstance(factor, (int, float)) else None,
                   language_runs=tuple(_list(found.get("language_runs"))), c_runs=tuple(_list(found.get("c_runs"))),
                   language_metrics=dict(_mapping(metrics.get("language"))), c_metrics=dict(_mapping(metrics.get("c"))),
                   sweep=SweepSummary.from_json(found.get("sweep")), gpu=GpuSummary.from_json(found.get("gpu")))

    def as_dict(self) -> dict[str, Any]:
        names = ("one_thread_seconds", "n_threads_seconds") if self.par else ("language_seconds", "c_seconds")
        return {"side": self.side, "sha": self.sha, names[0]: list(self.first), names[1]: list(self.second),
                "interval": self.interval.as_dict() if self.interval else None, "decision": self.decision,
                "output": self.output, "input": self.input, "against": self.against, "measure": self.measure,
                **({"factor": self.factor} if self.factor is not None else {}),
                "language_runs": [dict(r) for r in self.language_runs], "c_runs": [dict(r) for r in self.c_runs],
                "metrics": {"language": dict(self.language_metrics), "c": dict(self.c_metrics)},
                **({"sweep": self.sweep.as_dict()} if self.sweep else {}),
                **({"gpu": self.gpu.as_dict()} if self.gpu else {})}


@dataclass(frozen=True)
class RunResult:
    """What a run measured: services/bench/verify.Outcome as stored, or only the sides so far while it measures
    (`verdict` None), or nothing (a run that stopped before a sample)."""

    sides: tuple[SideResult, ...] = ()
    verdict: str | None = None  # the outcome's interval test; None: the samples so far, not an outcome
    message: str = ""
    runner: str = ""
    suite: SuiteResult | None = None  # the project's own benchmarks, base against head
    claim: ClaimSize | None = None  # the report's figure against the measured one
    gain: Interval | None = None  # a fix: the program's base time over its head time
    already_in_base: bool = False  # the fix commit is an ancestor of the base
    noisy: str | None = None  # why the host was too busy for these times to mean much
    in_main: bool = False  # rows of earlier versions: now RunOptions.in_main

    @property
    def par(self) -> bool:
        return any(side.par for side in self.sides)

    @property
    def last(self) -> SideResult | None:
        """The side the verdict is about (the head), None before any."""
        return self.sides[-1] if self.sides else None

    @property
    def measure(self) -> str | None:
        """The first measure a side names: every side of one run is measured alike."""
        return next((side.measure for side in self.sides if side.measure), None)

    @property
    def suite_verdict(self) -> str | None:
        return self.suite.verdict if self.suite else None

    @classmethod
    def from_json(cls, data: object) -> RunResult:
        found = _mapping(data)
        claim = _mapping(found.get("claim"))
        measured = Interval.from_json(claim.get("measured"))
        return cls(sides=tuple(SideResult.from_json(side) for side in _list(found.get("sides"))),
                   verdict=str(found["verdict"]) if found.get("verdict") is not None else None,
                   message=str(found.get("message") or ""), runner=str(found.get("runner") or ""),
                   suite=_suite(found.get("suite")),
                   claim=ClaimSize(claim["claimed"], measured, bool(claim.get("off")))
                   if measured is not None and claim.get("claimed") is not None else None,
                   gain=Interval.from_json(found.get("gain")), already_in_base=bool(found.get("already_in_base")),
                   noisy=str(found["noisy"]) if found.get("noisy") else None, in_main=bool(found.get("in_main")))

    def as_dict(self) -> dict[str, Any]:
        sides = [side.as_dict() for side in self.sides]
        if self.verdict is None:  # the samples so far (or none at all)
            return {"sides": sides} if sides else {}
        return {"verdict": self.verdict, "message": self.message, "runner": self.runner, "sides": sides,
                "suite": self.suite.as_dict() if self.suite else None,
                "claim": self.claim.as_dict() if self.claim else None,
                "gain": self.gain.as_dict() if self.gain else None, "already_in_base": self.already_in_base,
                "noisy": self.noisy, **({"in_main": True} if self.in_main else {})}


def _suite(data: object) -> SuiteResult | None:
    """A stored suite; its `summary` is said again from its benchmarks (SuiteResult.summary), as when it was made."""
    found = _mapping(data)
    if not found:
        return None
    from bot.core.verify.suite import Benchmark, SuiteResult  # loads numpy (stats): only a run with a suite pays it

    benchmarks = []
    for bench in map(_mapping, _list(found.get("benchmarks"))):
        interval = Interval.from_json(bench.get("head_over_base"))
        if interval is not None:
            benchmarks.append(Benchmark(str(bench.get("name") or ""), tuple(_list(bench.get("base_seconds"))),
                                        tuple(_list(bench.get("head_seconds"))), interval,
                                        str(bench.get("decision") or "")))
    return SuiteResult(str(found.get("verdict") or ""), found.get("tolerance") or 0.0, tuple(benchmarks),
                       tuple(map(str, _list(found.get("only_base")))), tuple(map(str, _list(found.get("only_head")))))
