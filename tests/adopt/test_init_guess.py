"""What init guesses and check proposes, decided without I/O (core/config/init_guess.py, check_advice.py)."""
from __future__ import annotations

import pytest

from bot.core.config.check_advice import build_script, c_value, heap_define, with_define
from bot.core.config.init_guess import (
    BuildGuess,
    Findings,
    RunGuess,
    config_text,
    example_extension,
    guess_build,
    guess_run,
    program_tags,
    readme_builds,
)


@pytest.mark.parametrize("files, folder, command", [
    ({"Makefile": None}, "rt", ("make", "-C", "rt")),
    ({"build.sh": None}, "rt", ("sh", "-c", "cd rt && sh build.sh")),
    ({"meson.build": None}, "", ("sh", "-c", "meson setup builddir . --buildtype=release && meson compile -C "
                                             "builddir")),
    ({"CMakeLists.txt": None}, "c src", ("sh", "-c", "cmake -S 'c src' -B 'c src/build' -DCMAKE_BUILD_TYPE=Release "
                                                     "&& cmake --build 'c src/build'")),
    ({"rt.c": "#include <pthread.h>\n"}, "clang", ("gcc", "-O2", "-pthread", "-o", "clang/rt", "clang/rt.c")),
    ({"a.c": None, "b.c": None}, "clang", None),
])
def test_a_build_in_a_first_level_folder_runs_from_the_checkouts_root(files, folder, command):
    guess = guess_build(files, "gcc", folder)
    assert (guess.command if guess else None) == command


def test_a_cargo_package_in_a_folder_is_built_by_its_manifest():
    guess = guess_build({"Cargo.toml": '[package]\nname = "rt"\n'}, "gcc", "rust")
    assert guess.command == ("cargo", "build", "--release", "--manifest-path", "rust/Cargo.toml")
    assert guess.binary_hint == "rust/target/release/rt"


def test_the_readme_build_lines_are_joined_and_its_clone_is_left_out():
    readme = """# rt\n\n```bash\n$ git clone https://x.invalid/rt\n$ cd rt\n$ cd clang\n$ make -j4\n$ ./rt run x.rt\n```
\n```\npip install numpy\n```\n\n```sh\nmkdir -p out && cc -O3 -o out/rt rt.c -lm\n```\n"""
    assert readme_builds(readme) == [BuildGuess(("sh", "-c", "cd clang && make -j4"), "the README's build line"),
                                     BuildGuess(("sh", "-c", "mkdir -p out && cc -O3 -o out/rt rt.c -lm"),
                                                "the README's build line")]
    assert readme_builds("```sh\ncd somewhere\n```\n") == []
    # HVM's README installs with cargo; a make line may install too: neither is a build the sandbox can run.
    assert readme_builds("```\n$ cargo install hvm\n$ make && make install\n$ cmake --install build\n```\n") == \
        [BuildGuess(("sh", "-c", "make"), "the README's build line")]


def test_the_statistics_option_is_found_beside_the_thread_option():
    guess = guess_run("rt", "usage: rt [-T N] [-s] FILE.rt\n  -T N   worker threads\n  -s     print statistics\n")
    assert guess.language == ("./rt", "-T", "{threads}", "{file}") and guess.statistics == "-s"
    assert guess_run("rt", "usage: rt FILE\n").statistics is None


def test_the_fence_tag_comes_from_the_reports_and_the_extension_from_examples():
    assert program_tags(["tl", "bend", "tl", "c", "stk"], None) == ("tl", "stk")  # built-in and C tags are not
    assert program_tags([], "tl") == ("tl",) and program_tags([], "c") == () and program_tags([], None) == ()
    assert example_extension(["a.tl", "b.tl", "README.md", "c.py"]) == "tl"
    assert example_extension(["a.tl", "x.md"]) is None  # one file is no pattern


def test_what_init_could_not_verify_is_a_todo_line_and_nothing_is_a_runner():
    bare = config_text(Findings("gcc"))
    assert "# TODO: no build found in the root and first-level folders" in bare
    assert "# TODO: no runtime program found; write how it runs a file" in bare
    assert "# TODO: program = " in bare and "[[runners]]" not in bare and "[sandbox]" not in bare
    failed = config_text(Findings("gcc", BuildGuess(("make",), "a Makefile"), built=False, build_error="cc: boom\n"))
    assert "# TODO: this build, from a Makefile, FAILED here: cc: boom" in failed and 'command = ["make"]' in failed
    ran = config_text(Findings("gcc", BuildGuess(("make",), "a Makefile"), built=True, binary="rt",
                               run=RunGuess(("./rt", "{file}"), "rt", False, (), "-s"), extension="rt",
                               fences=("rt",)))
    assert "# TODO: rt --help names no thread option" in ran and "# TODO: -s makes the runtime print" in ran
    assert 'language = ["./rt", "{file}"]' in ran and 'fence = ["rt"]' in ran


def test_a_heap_define_is_read_sized_and_passed_to_the_compiler_the_build_runs():
    assert c_value("(1ULL << 40)") == 1 << 40 and c_value("64 * 1024 * 1024") == 1 << 26
    assert c_value("0x10UL") == 16 and c_value("SIZE * 2") is None and c_value("1 << 3 + 1") == 16
    source = "#ifndef HEAP_WORDS\n#define HEAP_WORDS (1UL << 32)  // cells\n#endif\n"
    assert heap_define({"rt.c": source}, 32768) == ("HEAP_WORDS", 1 << 32, 8)  # 8-byte words: 32 GiB
    assert heap_define({"rt.c": "#define HEAP_WORDS (1UL << 32)\n"}, 32768) is None  # no #ifndef: -D cannot win
    assert with_define(("gcc", "-O2", "-DHEAP_WORDS=9", "rt.c"), "HEAP_WORDS", 4) == \
        ("gcc", "-DHEAP_WORDS=4", "-O2", "rt.c")
    assert with_define(("sh", "-c", "cd c && cc -O2 rt.c"), "HEAP", 4) == ("sh", "-c", "cd c && cc -DHEAP=4 -O2 rt.c")
    assert with_define(("make",), "HEAP", 4) is None
    # The runtime lives in clang/: the define goes to the compiler, not to the `cd` into that folder.
    assert with_define(("sh", "-c", "cd clang && gcc -O2 -o hvm hvm.c"), "HEAP", 4) == \
        ("sh", "-c", "cd clang && gcc -DHEAP=4 -O2 -o hvm hvm.c")
    assert with_define(("sh", "-c", "cd clang; /usr/bin/clang -DHEAP=3 hvm.c"), "HEAP", 4) == \
        ("sh", "-c", "cd clang; /usr/bin/clang -DHEAP=4 hvm.c")
    assert with_define(("sh", "-c", "cd clang && make"), "HEAP", 4) is None


def test_the_old_commit_script_drops_a_new_flag_and_picks_the_define_by_name():
    script = build_script(("gcc", "-DHEAP_BYTES=1024", "-o", "rt", "rt.c"), "", renamed="HEAP_CELLS",
                          flags=(("-T", "rt", "abc (rt: -T)"),))
    assert "then define=HEAP_BYTES; else define=HEAP_CELLS; fi" in script
    assert 'gcc "-D$define=1024" -o rt rt.c\n' in script and "exec gcc" not in script  # the wrapper comes after
    assert "[[:space:]]+[A-Z0-9_]*HEAP[A-Z0-9_]*'" in script  # a third name: the guard on the word both share
    readme = build_script(("sh", "-c", "cd clang && gcc -DHEAP_SIZE=8 -o hvm hvm.c"), "", renamed="HEAP_WORDS")
    assert "define=HEAP_SIZE; else define=HEAP_WORDS; fi" in readme
    assert '\n(cd clang && gcc -D"$define"=8 -o hvm hvm.c)\n' in readme  # the README's line, its define picked
    assert 'drop="$drop  -T) skip=1; continue;; -T?*) continue;;\\n"' in script and "mv rt rt.perfbot-real" in script
