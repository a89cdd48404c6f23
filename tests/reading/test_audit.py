"""The offline audit: each rule fires on a report that breaks it and stays quiet on one that does not."""
from __future__ import annotations

import pytest

from bot.core.lint.audit import RULES, audit, c_shape, language_shape
from bot.core.reports.parse import parse
from tests.reports import canonical_report

PATH = "devs/issues/perf_audit.md"


def rules_for(text: str) -> set[str]:
    record = parse(PATH, text.encode()).record
    return {f.rule for f in audit(record, PATH)}


def test_shapes_see_functions_recursion_and_constants():
    program = language_shape("def mask():\n  return 255\ndef go(n):\n  if n == 0:\n    return 0\n  else:\n    return "
                             "go(n - 1)\n")
    assert program.functions == {"mask", "go"} and program.recursive == {"go"} and program.constants == {"mask"}
    translation = c_shape("#include <stdio.h>\nstatic int go(int n) { while (n) n--; return 0; }\n"
                          "int main(void) { printf(\"%d\\n\", go(3)); return 0; }\n")
    assert translation.functions == {"go"} and translation.recursive == frozenset()


def test_the_canonical_report_passes_the_audit():
    assert rules_for(canonical_report("perf_audit")) == set()


def test_a_loop_in_c_for_a_recursion_in_the_language_is_not_one_to_one():
    text = canonical_report("perf_audit")
    start = text.index("```c\n") + 5
    loop = ("#include <stdio.h>\nstatic unsigned long long sum(int d) {\n  unsigned long long t = 0;\n"
            "  for (unsigned long long i = 0; i < (1ull << d); i++) t += i;\n  return t;\n}\n"
            "int main(void) { printf(\"%llu\\n\", sum(20)); return 0; }")
    text = text[:start] + loop + text[text.index("\n```", start):]
    assert "audit-c-recursion" in rules_for(text)


def test_a_missing_counterpart_function_is_named():
    text = canonical_report("perf_audit").replace("def main():\n  return sum(20, 0)",
                                                  "def helper(x):\n  return x\n"
                                                  "def main():\n  return helper(sum(20, 0))")
    findings = audit(parse(PATH, text.encode()).record, PATH)
    assert [f.rule for f in findings] == ["audit-c-functions"] and "helper" in findings[0].message


def test_a_long_program_is_not_minimal():
    filler = "".join(f"def f{n}(x):\n  return x + {n}\n" for n in range(40))
    text = canonical_report("perf_audit").replace("def main():", filler + "def main():")
    assert "audit-repro-size" in rules_for(text)


@pytest.mark.parametrize("rows, expected", [
    ("| bend | 1.0 s | mini | run |\n", True),
    ("| bend | 1.0 s | mini | run |\n| C | 0.2 s | mini | run |\n", False),
])
def test_a_ratio_needs_two_timed_runs(rows, expected):
    text = ("---\ntrack: seq\nbackend: c\nratio: 5\nfix: unknown\n---\n# t\n\n## Measurements\n\n"
            "| implementation | time | machine | command |\n| --- | --- | --- | --- |\n" + rows)
    assert ("audit-numbers" in rules_for(text)) is expected


def test_every_rule_has_an_id_and_a_summary():
    assert [rule for rule, _ in RULES] == ["audit-c-functions", "audit-c-recursion", "audit-repro-size",
                                           "audit-numbers"]


def test_a_par_claim_about_unmeasured_threads():
    text = canonical_report("perf_audit", track="par", backend="c", threads=16, ratio=3.0)
    assert "audit-numbers" not in rules_for(text)
    assert "audit-numbers" in rules_for(text.replace("threads: 16", "threads: 32", 1))


FIB_C = ("#include <stdio.h>\nstatic unsigned fib(unsigned n) {\n  if (n < 2) return n;\n"
         "  return fib(n - 1) + fib(n - 2);\n}\nint main(void) { printf(\"%u\\n\", fib(30)); return 0; }")
FIB_LOOP_C = ("#include <stdio.h>\nstatic unsigned fib(unsigned n) {\n  unsigned a = 0, b = 1;\n"
              "  while (n--) { unsigned t = a + b; a = b; b = t; }\n  return a;\n}\n"
              "int main(void) { printf(\"%u\\n\", fib(30)); return 0; }")
FIB_PROGRAMS = {
    "hvm4 lambda": ("hvm4", "@fib = λ{0:0; 1:1; λn. (+ @fib((- n 1)) @fib((- n 2)))}\n@main = @fib(30)"),
    "hvm4 applied": ("hvm4", "@fib(n) = ~n {\n  0: 0\n  1+p: ~p { 0: 1; 1+q: (+ @fib(p) @fib(q)) }\n}\n"
                             "@main = @fib(30)"),
    "bend def": ("bend", "def fib(n):\n  if n < 2:\n    return n\n  else:\n    return fib(n - 1) + fib(n - 2)\n"
                         "def main():\n  return fib(30)"),
    "bend2 fn": ("bend2", "fn fib(n: u32) -> u32 {\n  if n < 2 { n } else { fib(n - 1) + fib(n - 2) }\n}\n"
                          "fn main() -> u32 {\n  fib(30)\n}"),
}


def fib_report(tag: str, program: str, c: str = FIB_C) -> str:
    return ("---\ntrack: seq\nratio: 5\nfix: unknown\n---\n# Fib\n\n## Reproduction\n\n"
            f"```{tag}\n{program}\n```\n\n```c\n{c}\n```\n")


@pytest.mark.parametrize("name", FIB_PROGRAMS)
def test_a_correct_pair_raises_no_audit_warning_in_any_syntax(name):
    assert rules_for(fib_report(*FIB_PROGRAMS[name])) == set()


@pytest.mark.parametrize("name", FIB_PROGRAMS)
def test_a_recursion_translated_to_a_loop_is_caught_in_any_syntax(name):
    assert rules_for(fib_report(*FIB_PROGRAMS[name], c=FIB_LOOP_C)) == {"audit-c-recursion"}


def test_hvm4_references_are_calls_and_names_match_across_spellings():
    shape = language_shape("@List/sum = λ{#Nil: 0; #Cons{h t}: (+ h @List/sum(t))}\n@N = 30\n@main = @List/sum(@N)")
    assert shape.recursive == {"List/sum"} and shape.constants == {"N"}
    assert rules_for(fib_report("hvm4", "@List/sum = λ{#Nil: 0; #Cons{h t}: (+ h @List/sum(t))}\n@main = 0",
                                c=FIB_C.replace("fib", "list_sum"))) == set()


def test_mutual_recursion_counts_on_both_sides():
    program = language_shape("def even(n):\n  if n == 0:\n    return 1\n  else:\n    return odd(n - 1)\n"
                             "def odd(n):\n  if n == 0:\n    return 0\n  else:\n    return even(n - 1)\n")
    translation = c_shape("static int odd(int n);\nstatic int even(int n) { return n == 0 ? 1 : odd(n - 1); }\n"
                          "static int odd(int n) { return n == 0 ? 0 : even(n - 1); }\n")
    assert program.recursive == {"even", "odd"} and translation.recursive == {"even", "odd"}


def test_bend_fold_is_recursion_written_as_a_construct():
    program = ("type Tree:\n  Node { ~left, ~right }\n  Leaf { val }\n\ndef sum(t):\n  fold t:\n"
               "    case Tree/Node:\n      return t.left + t.right\n    case Tree/Leaf:\n      return t.val\n")
    assert language_shape(program).recurses
    c = ("#include <stdio.h>\ntypedef struct T { struct T *l, *r; int v; } T;\n"
         "static int sum(T *t) { return t->l ? sum(t->l) + sum(t->r) : t->v; }\n"
         "int main(void) { T leaf = {0, 0, 1}; printf(\"%d\\n\", sum(&leaf)); return 0; }")
    assert rules_for(fib_report("bend", program, c=c)) == set()
