"""Why a run failed, read from the evidence it left, and what to change: one classifier for `perfbot check`,
`perfbot verify` and bench comments, so each failure gets the same hint wherever it is shown.

The evidence is what a runner can tell (exit status, the limit that ended the run, the program's own words, the
host's memory); the hint follows it. A hint that cannot help is not given: when the runtime reserves more than
the host has, raising the memory cap changes nothing, and the hint says so and looks at the reservation.
"""
from __future__ import annotations

import enum
import re
from dataclasses import dataclass

# What programs print when an allocation is refused: malloc's ENOMEM, C++'s bad_alloc, a runtime's own words.
_OUT_OF_MEMORY = re.compile(r"out of memory|cannot allocate memory|memory allocation failed|bad_alloc|"
                            r"MemoryError|ENOMEM|(?:mmap|calloc|malloc|realloc|reserve)\w*\b[^\n]{0,60}"
                            r"\b(?:failed|refused|error)", re.IGNORECASE)
# A size on a line about an allocation: "mmap of 34359738368 bytes", "cannot reserve 32 GiB", "calloc(1<<30)".
_ALLOCATION_LINE = re.compile(r"mmap|calloc|malloc|alloc|reserv|heap|arena", re.IGNORECASE)
_SIZE = re.compile(r"\b([0-9][0-9_,]*(?:\.[0-9]+)?)\s*(bytes?|[KMGT]i?B|[KMGT]\b)?", re.IGNORECASE)
_UNITS = {"": 1, "b": 1, "byte": 1, "bytes": 1, "k": 1 << 10, "kb": 1000, "kib": 1 << 10, "m": 1 << 20,
          "mb": 1000 ** 2, "mib": 1 << 20, "g": 1 << 30, "gb": 1000 ** 3, "gib": 1 << 30, "t": 1 << 40,
          "tb": 1000 ** 4, "tib": 1 << 40}
# A process or thread the kernel would not make: the process limit, whatever ended the run afterwards.
_FORK_REFUSED = re.compile(r"(?:fork|clone|pthread_create|spawn)\w*[^\n]{0,40}(?:Resource temporarily unavailable|"
                           r"EAGAIN|retry)|cannot fork|can't fork|Cannot fork|fork failed", re.IGNORECASE)
_UNKNOWN_OPTION = re.compile(
    r"(?:unknown|unrecognized|unrecognised|invalid|illegal|unsupported|unexpected)\s+(?:command[- ]line\s+)?"
    r"(?:option|flag|argument|switch)s?\b[\s:'\"`\u2018]*(-{1,2}[A-Za-z][\w-]*)|"
    r"(?:option|flag)\s+['\"`\u2018]?(-{1,2}[A-Za-z][\w-]*)['\"\u2019]?\s+(?:is\s+)?(?:not recognized|unknown|invalid)|"
    r"(?:invalid|unrecognized) option -- '?([A-Za-z0-9])",  # getopt's
    re.IGNORECASE)
# Only a reader's words: "expected 5, got 6" is a program's own assertion, never read as a parse error.
_PARSE_ERROR = re.compile(r"parse error|syntax error|parsing error|failed to parse|unexpected (?:token|character|"
                          r"symbol|end of (?:file|input))|ParseError|SyntaxError", re.IGNORECASE)
_MISSING = re.compile(r"cannot run (\S+): \[Errno 2\]|(\S+): (?:No such file or directory|not found)$",
                      re.IGNORECASE | re.MULTILINE)


class Kind(enum.Enum):
    TIMEOUT = "timeout"
    PROCESSES = "processes"
    RESERVATION = "reservation"  # the runtime asks for more memory than the host has: no cap helps
    ADDRESS_SPACE = "address-space"  # an allocation refused under the cap (every mapping counts, touched or not)
    MEMORY_CAP = "memory-cap"  # the cgroup saw the tree reach the cap
    UNKNOWN_OPTION = "unknown-option"
    PARSE_ERROR = "parse-error"
    MISSING_PROGRAM = "missing-program"
    EXITED = "exited"


@dataclass(frozen=True)
class Evidence:
    returncode: int
    stdout: str
    stderr: str
    timed_out: bool = False
    limit: str | None = None  # time, memory, processes, output: what the runner saw end the run
    host_memory_mb: int | None = None  # the memory of the host the run was on, when it said


@dataclass(frozen=True)
class Failure:
    kind: Kind
    text: str  # what happened, with the end of the program's output
    hint: str = ""  # what to change, or where to look; "" when the evidence points nowhere
    flag: str | None = None  # UNKNOWN_OPTION: the option as the runtime rejected it
    reserved_mb: int | None = None  # the largest allocation the output names

    def __str__(self) -> str:
        return self.text + (f"\n({self.hint})" if self.hint else "")


def classify(evidence: Evidence, what: str, at: str, timeout: float, memory_mb: int) -> Failure:
    """The failure of `what` (`at` a commit or a host), with the hint its evidence supports."""
    tail = (evidence.stderr or evidence.stdout).strip()[-300:]
    words = evidence.stderr + "\n" + evidence.stdout
    exited = f"{what} {at} exited {evidence.returncode}:\n{tail}"
    if evidence.limit == "processes" or _FORK_REFUSED.search(words):
        return Failure(Kind.PROCESSES, f"{what} hit the process limit {at}: {tail}",
                       "a fork bomb or a runaway thread pool; the limit is [sandbox] processes, every process "
                       "and thread of the run's tree")
    if evidence.timed_out:
        return Failure(Kind.TIMEOUT, f"{what} ran past the {timeout:g}s limit {at} ([verify] timeout_seconds)")
    reserved = reserved_mb(words)
    host = evidence.host_memory_mb
    if evidence.limit == "memory" or _OUT_OF_MEMORY.search(words):
        if reserved is not None and host is not None and reserved > host:
            return Failure(Kind.RESERVATION, exited, (
                f"the runtime asks for {reserved} MB at once, more than this host's {host} MB: raising [verify] "
                "memory_mb will not help; make the runtime reserve less (the define, flag or variable that sizes "
                "its heap: `perfbot check` names the define when it finds it)"), reserved_mb=reserved)
        if evidence.limit == "memory":
            return Failure(Kind.MEMORY_CAP, f"{what} hit the memory cap of {memory_mb} MB {at} (the whole process "
                           f"tree; raise [verify] memory_mb if the program needs more): {tail}", reserved_mb=reserved)
        if reserved is not None and reserved > memory_mb:
            return Failure(Kind.ADDRESS_SPACE, exited, (
                f"the runtime asks for {reserved} MB at once, past the memory cap of {memory_mb} MB (the cap bounds "
                f"address space: a reservation counts even untouched); raise [verify] memory_mb above {reserved} "
                "or make the runtime reserve less"), reserved_mb=reserved)
        if host is not None and memory_mb >= host:
            # The cap already allows all the host has: a larger one cannot be what this run lacks.
            return Failure(Kind.ADDRESS_SPACE, exited, (
                f"the memory cap of {memory_mb} MB is already at or past this host's {host} MB: raising [verify] "
                "memory_mb will not help; look at what the runtime reserves at start (an mmap or calloc of its "
                "heap, the define or flag that sizes it: `perfbot check` names the define when it finds it)"),
                reserved_mb=reserved)
        return Failure(Kind.ADDRESS_SPACE, exited, (
            f"it may have hit the memory cap of {memory_mb} MB a process: raise [verify] memory_mb if the program "
            "needs more; if a larger cap fails the same way, look at what the runtime reserves"), reserved_mb=reserved)
    option = _UNKNOWN_OPTION.search(words)
    if option:
        flag = option.group(1) or option.group(2) or f"-{option.group(3)}"
        return Failure(Kind.UNKNOWN_OPTION, exited, f"the runtime does not accept {flag} {at}: it is in [run] "
                       "language, or an older commit predates the option (`perfbot check --revision` proposes a "
                       "build script for every revision)", flag=flag)
    if _PARSE_ERROR.search(words):
        return Failure(Kind.PARSE_ERROR, exited, "the runtime could not read the program")
    missing = _MISSING.search(words)
    if missing or evidence.returncode == 127:
        name = (missing.group(1) or missing.group(2)) if missing else "a program it names"
        return Failure(Kind.MISSING_PROGRAM, exited, f"{name} is not there: did the build make it, where [run] "
                       "language says?")
    return Failure(Kind.EXITED, exited)


def reserved_mb(output: str) -> int | None:
    """The largest allocation the output names, in MB (a count without a unit is bytes), if any line about an
    allocation names one of at least a megabyte."""
    sizes = []
    for line in output.splitlines():
        if not _ALLOCATION_LINE.search(line):
            continue
        for number, unit in _SIZE.findall(line):
            try:
                value = float(number.replace(",", "").replace("_", "")) * _UNITS[(unit or "").lower()]
            except (KeyError, ValueError):
                continue
            if value >= 1 << 20:
                sizes.append(int(value) >> 20)
    return max(sizes) if sizes else None


def option_base(flag: str) -> str:
    """`-T1` -> `-T`, `--threads=4` -> `--threads`: the option without the value glued to it."""
    flag = flag.split("=", 1)[0]
    return re.sub(r"(?<=^-[A-Za-z])[0-9]+$", "", flag)
