"""What `perfbot init` guesses about a repository, without I/O: how it builds (from its files at the root or in
a first-level folder, or from its README's code blocks), how its runtime takes a program file, a thread count
and a statistics switch (from its `--help`), and the commented `.perfbot.toml` that says what was verified and
leaves a `TODO` line for what was not."""
from __future__ import annotations

import re
import shlex
from collections import Counter
from dataclasses import dataclass, field

from bot.core.config.check_advice import toml_list
from bot.core.reports.codeblocks import FENCE_TAG, LANGUAGE_TAGS, RESERVED_TAGS

# A usage line's program operand: PROGRAM.dl, FILE.hvm, <file.bend>, file, PROGRAM.
_FILE_OPERAND = re.compile(r"^[<\[]?([A-Za-z_]*(?:file|prog|program|source|script|input)[A-Za-z_]*)"
                           r"(?:\.([A-Za-z0-9]{1,8}))?[>\]]?$", re.IGNORECASE)
_EXTENSION_OPERAND = re.compile(r"^[<]?[A-Za-z_]+\.([A-Za-z0-9]{1,8})[>]?$")
_THREADS_OPTION = re.compile(r"(--?[A-Za-z][A-Za-z-]*)([ =]?)(?:<?[A-Z_]*THREADS?[A-Z_]*>?|N|NUM)\b|"
                             r"(--?[A-Za-z][A-Za-z-]*)\s+(?:<\w+>\s+|\w+\s+)?.{0,30}threads", re.IGNORECASE)
_STATS_OPTION = re.compile(r"(?:^|[\s\[])(--?[A-Za-z][A-Za-z-]*)\]?[ \t]+[^\n]{0,40}?\b(?:stat(?:istic)?s?|"
                           r"counters|profile)\b", re.IGNORECASE | re.MULTILINE)
# A README line that builds: make, cmake, cargo build, meson, ninja, a C compiler, or a build script.
_BUILD_WORD = re.compile(r"^(?:make|cmake|cargo|meson|ninja|gcc|cc|clang|sh\s+\S*build\S*|\./build\S*\.sh)\b")
_README_STEP = re.compile(r"^(?:cd|mkdir|export|[A-Z_]+=\S*)\b")
_FENCE = re.compile(r"^(`{3,}|~{3,})[^\n]*\n(.*?)^\1\s*$", re.MULTILINE | re.DOTALL)
# Extensions that are never a runtime's own programs.
_COMMON_EXTENSIONS = frozenset({"c", "h", "cc", "cpp", "hpp", "rs", "go", "py", "sh", "md", "txt", "toml", "json",
                                "yml", "yaml", "lock", "cmake", "o", "a", "so", "cu", "metal", "js", "ts", "html",
                                "css", "in", "mk", "cfg", "ini", "png", "svg", "jpg", "out", "log", "csv", "gitignore"})


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
    statistics: str | None = None  # the option that makes the runtime print its counters, if its help names one


def guess_build(files: dict[str, str | None], compiler: str, folder: str = "") -> BuildGuess | None:
    """`files`: the names in the repository's root, or in `folder` (a first-level folder), with the text of
    the few that decide (else None). The command runs at the checkout's root either way."""
    names = set(files)
    at = f" in {folder}/" if folder else ""
    sub = shlex.quote(folder) if folder else "."
    script = next((n for n in ("build.sh", "make.sh", "compile.sh") if n in names), None)
    if script:
        return BuildGuess(("sh", script) if not folder else ("sh", "-c", f"cd {sub} && sh {script}"),
                          f"{script}{at}")
    if names & {"Makefile", "makefile", "GNUmakefile"}:
        return BuildGuess(("make",) if not folder else ("make", "-C", folder), f"a Makefile{at}")
    if "CMakeLists.txt" in names:
        out = f"{folder}/build" if folder else "build"
        return BuildGuess(("sh", "-c", f"cmake -S {sub} -B {shlex.quote(out)} -DCMAKE_BUILD_TYPE=Release && "
                           f"cmake --build {shlex.quote(out)}"), f"CMakeLists.txt{at}")
    if "meson.build" in names:
        out = f"{folder}/builddir" if folder else "builddir"
        return BuildGuess(("sh", "-c", f"meson setup {shlex.quote(out)} {sub} --buildtype=release && "
                           f"meson compile -C {shlex.quote(out)}"), f"meson.build{at}")
    if "Cargo.toml" in names:
        found = re.search(r'^\s*name\s*=\s*"([A-Za-z0-9_-]+)"', files.get("Cargo.toml") or "", re.MULTILINE)
        target = f"{folder}/target/release" if folder else "target/release"
        command = ("cargo", "build", "--release") + (("--manifest-path", f"{folder}/Cargo.toml") if folder else ())
        return BuildGuess(command, f"Cargo.toml{at}", f"{target}/{found.group(1)}" if found else None)
    sources = sorted(n for n in names if n.endswith(".c"))
    if len(sources) == 1:
        source = files.get(sources[0]) or ""
        prefix = f"{folder}/" if folder else ""
        name = prefix + sources[0][:-2]
        flags = ["-pthread"] if "pthread.h" in source else []
        libraries = ["-lm"] if "math.h" in source else []
        return BuildGuess((compiler, "-O2", *flags, "-o", name, prefix + sources[0], *libraries),
                          f"the single C file {prefix}{sources[0]}", name)
    return None


def readme_builds(readme: str) -> list[BuildGuess]:
    """The build commands of a README's code blocks, each block's steps joined as one `sh -c` line: `cd
    clang`, then `cc -O3 -o hvm hvm.c`. Lines that install, fetch or run something else are left out, and so is
    the `cd` into the folder a `git clone` line just made (perfbot builds in the clone already)."""
    found = []
    for block in _FENCE.finditer(readme):
        steps: list[str] = []
        cloned = False
        for line in block.group(2).splitlines():
            line = re.sub(r"^\s*[$#>]\s+", "", line.strip()).strip()
            # `make install`, `cargo install hvm`: installing is no build (and the sandbox can do neither).
            parts = [part.strip() for part in line.split("&&") if not re.search(r"\binstall\b", part)]
            line = " && ".join(parts)
            if line.startswith("git clone"):
                cloned = True
            elif any(_BUILD_WORD.match(part) for part in parts):
                steps.append(line)
            elif _README_STEP.match(line):
                if cloned and line.startswith("cd "):
                    cloned = False
                    continue
                steps.append(line)
        while steps and not any(_BUILD_WORD.match(p.strip()) for p in steps[-1].split("&&")):
            steps.pop()  # a trailing `cd` builds nothing
        if steps:
            found.append(BuildGuess(("sh", "-c", " && ".join(steps)), "the README's build line"))
    return found


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
    option = (threads.group(1) or threads.group(3)) if threads else None
    # As the help writes it: `-T N` two arguments, `-TN` one, `--threads=N` one with its `=`.
    given = [option, "{threads}"] if not threads or not threads.group(1) or threads.group(2) == " " else \
        [f"{option}{threads.group(2)}{{threads}}"]
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
            argv += [*given, "{file}"] if option else ["{file}"]
            seen_file = True
        elif re.fullmatch(r"[a-z][a-z0-9-]*", bare):
            argv.append(bare)  # a subcommand, e.g. `bend run FILE`
    if not seen_file:
        argv += [*given, "{file}"] if option else ["{file}"]
        notes.append(f"{binary} --help names no program file; assumed it is the last argument")
    if not option:
        notes.append(f"{binary} --help names no thread option; par reports need one in [run] language")
    stats = _STATS_OPTION.search(help_text)
    return RunGuess(tuple(argv), extension, option is not None, tuple(notes),
                    stats.group(1) if stats and stats.group(1) != option else None)


def program_tags(texts: list[str], extension: str | None) -> tuple[str, ...]:
    """The fence tags a runtime's programs get in its reports (`texts`: their undeclared tags), most used first;
    else the program extension when it can be a tag."""
    counted = Counter(tag for tag in texts if FENCE_TAG.fullmatch(tag) and tag not in (*LANGUAGE_TAGS,
                                                                                       *RESERVED_TAGS))
    if counted:
        return tuple(tag for tag, _ in counted.most_common(3))
    if extension and FENCE_TAG.fullmatch(extension) and extension not in (*LANGUAGE_TAGS, *RESERVED_TAGS):
        return (extension,)
    return ()


def example_extension(names: list[str]) -> str | None:
    """The extension most example files share, when it is none of a build's or a document's own."""
    counted = Counter(n.rsplit(".", 1)[1].lower() for n in names if "." in n.strip("."))
    for extension, count in counted.most_common():
        if extension not in _COMMON_EXTENSIONS and re.fullmatch(r"[a-z0-9]{1,8}", extension) and count >= 2:
            return extension
    return None


@dataclass(frozen=True)
class Findings:
    """What `init` found and verified; None where it could not tell (written as a TODO line)."""
    compiler: str
    build: BuildGuess | None = None
    built: bool = False
    build_error: str | None = None
    run: RunGuess | None = None
    binary: str | None = None
    extension: str | None = None
    fences: tuple[str, ...] = ()
    looked: str = "the root and first-level folders, the README's code blocks"


def config_text(found: Findings) -> str:
    """The `.perfbot.toml` `init` writes: verified keys as keys, the rest as `# TODO` lines that say why."""
    lines = ["# .perfbot.toml written by `perfbot init`: check it with `perfbot check --config .perfbot.toml`,",
             "# then commit it. Every key: `perfbot config reference`, and perfbot's docs/adopt.md.", ""]
    build, run = found.build, found.run
    if build is None:
        lines += ["[build]", f"# TODO: no build found in {found.looked}; write the command that builds the runtime",
                  '# command = ["make"]']
    elif found.built:
        lines += ["[build]                        # run in a checkout of each commit measured; it built here",
                  f"command = {toml_list(build.command)}   # from {build.why}"]
    else:
        lines += ["[build]", f"# TODO: this build, from {build.why}, FAILED here: {_one_line(found.build_error)}",
                  f"command = {toml_list(build.command)}"]
    lines += ["", "[run]                          # how the runtime runs a report's program: {file} {threads} {input}"]
    if run is not None:
        lines.append(f"language = {toml_list(run.language)}")
        if not run.threads:
            lines.append(f"# TODO: {found.binary} --help names no thread option; par reports need {{threads}} in "
                         "language")
        if run.statistics:
            lines += [f"# TODO: {run.statistics} makes the runtime print statistics ({found.binary} --help): add it "
                      "to language,", "# then `perfbot check` writes the [run] normalize and metrics lines for them"]
    else:
        lines += ["# TODO: no runtime program found" + (" (the build failed)" if build and not found.built else "")
                  + "; write how it runs a file:", '# language = ["./runtime", "{file}"]']
    if found.extension:
        lines.append(f'program = "main.{found.extension}"          # the file a report\'s program is written to')
    else:
        lines.append('# TODO: program = "main.EXT": the extension the runtime wants (none found in --help or '
                     "example files)")
    if found.fences:
        lines.append(f"fence = {toml_list(found.fences)}  # the tag a report fences its program with")
    else:
        lines.append('# fence = ["mylang"]           # when reports fence their program with the runtime\'s own '
                     "tag (none found)")
    lines += [f"c_compile = {toml_list((found.compiler, '-O2', '-o', '{out}', '{file}'))}   # {found.compiler} "
              "was found on this machine",
              '# output = "normalize"         # when the runtime prints statistics: drop them before outputs are '
              "compared", "# normalize = [['(?m)^STAT: .*\\n?', '']]", "# metrics = {steps = 'STEPS: ([0-9]+)'}",
              "", "[verify]", "min_samples = 5", "max_samples = 30", "timeout_seconds = 60", "",
              "# [new]                        # what `perfbot new` starts a report from: a program the runtime "
              "runs, its C twin", "# program = \'\'\'", "# ...", "# \'\'\'", "# translation = \'\'\'",
              "# int main(void) { ... }", "# \'\'\'", '# prints = "..."               # what both print']
    return "\n".join(lines) + "\n"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())[-200:]
