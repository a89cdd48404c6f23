"""What `perfbot init` guesses about a repository, without I/O: how it builds (from its files), how its runtime
takes a program file and a thread count (from its `--help`), and the commented `.perfbot.toml` that says so."""
from __future__ import annotations

import re
from dataclasses import dataclass, field

from bot.core.reports.codeblocks import FENCE_TAG, LANGUAGE_TAGS, RESERVED_TAGS

# A usage line's program operand: PROGRAM.dl, FILE.hvm, <file.bend>, file, PROGRAM.
_FILE_OPERAND = re.compile(r"^[<\[]?([A-Za-z_]*(?:file|prog|program|source|script|input)[A-Za-z_]*)"
                           r"(?:\.([A-Za-z0-9]{1,8}))?[>\]]?$", re.IGNORECASE)
_EXTENSION_OPERAND = re.compile(r"^[<]?[A-Za-z_]+\.([A-Za-z0-9]{1,8})[>]?$")
_THREADS_OPTION = re.compile(r"(--?[A-Za-z][A-Za-z-]*)[ =]?(?:<?[A-Z_]*THREADS?[A-Z_]*>?|N|NUM)\b|"
                             r"(--?[A-Za-z][A-Za-z-]*)\s+(?:<\w+>\s+|\w+\s+)?.{0,30}threads", re.IGNORECASE)


@dataclass(frozen=True)
class BuildGuess:
    command: tuple[str, ...]
    why: str
    binary_hint: str | None = None  # what the build makes, when the build says


@dataclass(frozen=True)
class RunGuess:
    language: tuple[str, ...]
    extension: str | None = None
    threads: bool = False
    notes: tuple[str, ...] = field(default=())


def guess_build(files: dict[str, str | None], compiler: str) -> BuildGuess | None:
    """`files`: the repository's top-level file names, with the text of the few that decide (else None)."""
    names = set(files)
    if "build.sh" in names:
        return BuildGuess(("sh", "build.sh"), "build.sh")
    if names & {"Makefile", "makefile", "GNUmakefile"}:
        return BuildGuess(("make",), "a Makefile")
    if "CMakeLists.txt" in names:
        return BuildGuess(("sh", "-c", "cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build"),
                          "CMakeLists.txt")
    if "Cargo.toml" in names:
        found = re.search(r'^\s*name\s*=\s*"([A-Za-z0-9_-]+)"', files.get("Cargo.toml") or "", re.MULTILINE)
        return BuildGuess(("cargo", "build", "--release"), "Cargo.toml",
                          f"target/release/{found.group(1)}" if found else None)
    sources = sorted(n for n in names if n.endswith(".c"))
    if len(sources) == 1:
        source = files.get(sources[0]) or ""
        name = sources[0][:-2]
        flags = ["-pthread"] if "pthread.h" in source else []
        libraries = ["-lm"] if "math.h" in source else []
        return BuildGuess((compiler, "-O2", *flags, "-o", name, sources[0], *libraries), f"the single C file "
                          f"{sources[0]}", name)
    return None


def with_define(build: BuildGuess, failure: str) -> BuildGuess | None:
    """The compiler command again with the define a failed build asks for (`#error "build with -DHEAP=1024"`);
    None when the build is not a compiler command or asks for nothing it does not pass already."""
    if build.binary_hint is None or build.command[0] not in ("gcc", "clang", "cc"):
        return None
    for name, value in re.findall(r"-D([A-Za-z_][A-Za-z0-9_]*)=([A-Za-z0-9_.<>x]+)", failure):
        if "<" not in value and not any(arg.startswith(f"-D{name}") for arg in build.command):
            command = (*build.command[:2], f"-D{name}={value}", *build.command[2:])
            return BuildGuess(command, f"{build.why}, with -D{name}={value} as its build error asks",
                              build.binary_hint)
    return None


def guess_run(binary: str, help_text: str) -> RunGuess:
    """The run template for `binary` from its help: the operand that names a program file (and its extension),
    a thread option, and the words before the file (a subcommand such as `run`)."""
    usage = next((line for line in help_text.splitlines() if re.match(r"\s*usage:", line, re.IGNORECASE)), "")
    words = usage.split()[2:] if usage else []  # after "usage:" and the program's own name
    threads = _THREADS_OPTION.search(help_text)
    option = (threads.group(1) or threads.group(2)) if threads else None
    argv: list[str] = [binary if binary.startswith("/") else f"./{binary.removeprefix('./')}"]
    extension, notes, seen_file = None, [], False
    for word in words:
        bare = word.strip("[]")
        if seen_file or word.startswith("[") or word.startswith("-") or word.startswith("("):
            if seen_file:
                break
            continue
        found = _FILE_OPERAND.match(word) or _EXTENSION_OPERAND.match(word)
        if found:
            extension = found.groups()[-1]
            argv += [option, "{threads}", "{file}"] if option else ["{file}"]
            seen_file = True
        elif re.fullmatch(r"[a-z][a-z0-9-]*", bare):
            argv.append(bare)  # a subcommand, e.g. `bend run FILE`
    if not seen_file:
        argv += [option, "{threads}", "{file}"] if option else ["{file}"]
        notes.append(f"{binary} --help names no program file; assumed it is the last argument")
    if not option:
        notes.append(f"{binary} --help names no thread option; par reports need one in [run] language")
    return RunGuess(tuple(argv), extension, option is not None, tuple(notes))


def config_text(build: BuildGuess, run: RunGuess, compiler: str, binary: str) -> str:
    program = f'program = "main.{run.extension}"          # the file a report\'s program is written to\n' \
        if run.extension else ""
    own = run.extension
    if own and FENCE_TAG.fullmatch(own) and own not in (*LANGUAGE_TAGS, *RESERVED_TAGS):
        program += f'fence = ["{own}"]  # a report\'s program is fenced ```{own} (add the tags your reports use)\n'
    return f"""\
# .perfbot.toml written by `perfbot init`: check it with `perfbot check --config .perfbot.toml`, then commit it.
# Every key: `perfbot config reference`, and perfbot's docs/adopt.md.

[build]                        # run in a checkout of each commit measured; guessed from {build.why}
command = {_toml_list(build.command)}

[run]                          # how the runtime ({binary}) runs a report's program: {{file}} {{threads}} {{input}}
language = {_toml_list(run.language)}
{program}c_compile = {_toml_list((compiler, "-O2", "-o", "{out}", "{file}"))}   # {compiler} was found on this machine
# output = "normalize"         # when the runtime prints statistics: drop them before outputs are compared
# normalize = [['(?m)^STAT: .*\\n?', '']]
# metrics = {{steps = 'STEPS: ([0-9]+)'}}

[verify]
min_samples = 5
max_samples = 30
timeout_seconds = 60

# Where reports' code runs (runners, the sandbox) is perfbot's operator's: instance/perfbot.toml, not this file.

# [new]                        # what `perfbot new` starts a report from: a program {binary} runs, its C twin
# program = '''
# ...
# '''
# translation = '''
# int main(void) {{ ... }}
# '''
# prints = "..."               # what both print
"""


def _toml_list(items) -> str:
    return "[" + ", ".join('"' + item.replace("\\", "\\\\").replace('"', '\\"') + '"' for item in items) + "]"
