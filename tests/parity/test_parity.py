"""The parity guard's core: blocks found in each marker style, twins paired, shapes compared, one-sided changes."""
from __future__ import annotations

import pytest

from bot.core.config import ConfigFileError, parse_repo_config
from bot.parity.check import check_change, check_files

NAMES = """
[parity.names]
threadgroup = "__shared__"
thread_position_in_grid = "blockIdx*blockDim+threadIdx"
threadgroup_barrier = "__syncthreads"
"""


def config(style: str = "markers", extra: str = "") -> object:
    text = f'[parity]\nfiles = ["gpu/**/*.h"]\nstyle = "{style}"\n{extra}{NAMES}'
    return parse_repo_config(text).parity


METAL_ADD = """kernel void {name}(device float* out [[buffer(0)]], uint i [[thread_position_in_grid]]) {{
    threadgroup float tile[64];
    if (i < 64) {{
        out[i] = scale(tile[i]);
    }}
    threadgroup_barrier(mem_flags::mem_threadgroup);
}}
"""
CUDA_ADD = """__global__ void {name}(float* out) {{
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    __shared__ float tile[64];
    if (i < 64) {{
        out[i] = scale(tile[i]);
    }}
    __syncthreads();
}}
"""


def marked(metal: str = "vector_add", cuda: str = "vector_add", cuda_body: str = CUDA_ADD) -> str:
    return (f"#pragma once\n// @metal {metal}\n" + METAL_ADD.format(name=metal) + "\n"
            f"// @cuda {cuda}\n" + cuda_body.format(name=cuda))


def test_a_clean_marked_file_has_one_pair_and_no_findings():
    report = check_files({"gpu/kernels.h": marked()}, config())
    assert (report.files, report.pairs, report.findings) == (1, 1, ())


def test_the_same_pair_in_ifdef_arms_and_with_prefixes_is_clean_too():
    ifdef = ("#if defined(__METAL_VERSION__)\n#include <metal_stdlib>\nusing namespace metal;\n"
             + METAL_ADD.format(name="vector_add") +
             "#elif defined(__CUDACC__)\n" + CUDA_ADD.format(name="vector_add") + "#endif\n")
    assert check_files({"gpu/k.h": ifdef}, config("ifdef")).pairs == 1
    assert check_files({"gpu/k.h": ifdef}, config("ifdef")).findings == ()
    prefix = METAL_ADD.format(name="metal_vector_add") + CUDA_ADD.format(name="cuda_vector_add")
    report = check_files({"gpu/k.h": prefix}, config("prefix"))
    assert (report.pairs, report.findings) == (1, ())


def test_an_else_arm_is_not_guessed_to_be_cuda():
    text = "#ifdef __METAL_VERSION__\n" + METAL_ADD.format(name="add") + "#else\nvoid add(float* o) {}\n#endif\n"
    [finding] = check_files({"gpu/k.h": text}, config("ifdef")).findings
    assert finding.rule == "missing-twin" and "Metal block `add` (gpu/k.h:2-8)" in finding.message


def test_a_missing_twin_names_the_lonely_block_and_how_to_pair_it():
    text = "// @cuda reduce\n__global__ void reduce(float* x) { __syncthreads(); }\n" + marked()
    [finding] = check_files({"gpu/k.h": text}, config()).findings
    assert finding.rule == "missing-twin"
    assert finding.message.startswith("CUDA block `reduce` (gpu/k.h:2-2) has no Metal twin in this file")
    assert "`// @metal reduce`" in finding.message
    assert [(loc.path, loc.line) for loc in finding.locations] == [("gpu/k.h", 2)]


def test_a_drifted_twin_names_both_blocks_and_the_first_difference():
    drifted = CUDA_ADD.replace("    __syncthreads();\n", "    for (int k = 0; k < 2; k++) __syncthreads();\n")
    [finding] = check_files({"gpu/k.h": marked(cuda_body=drifted)}, config()).findings
    assert finding.rule == "drifted-twin"
    assert "Metal block `vector_add` (gpu/k.h:3-9)" in finding.message
    assert "CUDA block `vector_add` (gpu/k.h:12-19)" in finding.message
    assert "first differ at gpu/k.h:8 (Metal) / gpu/k.h:18 (CUDA)" in finding.message
    assert ("Metal has call `threadgroup_barrier` (mapped to `__syncthreads`) where CUDA has loop `for`"
            in finding.message)
    assert [loc.line for loc in finding.locations] == [8, 18]


def test_the_name_mapping_is_what_makes_twins_agree():
    unmapped = parse_repo_config('[parity]\nfiles = ["gpu/*.h"]\n').parity
    [finding] = check_files({"gpu/k.h": marked()}, unmapped).findings
    assert finding.rule == "drifted-twin" and "`threadgroup_barrier`" in finding.message


def test_nesting_counts_as_shape():
    moved = CUDA_ADD.replace("        out[i] = scale(tile[i]);\n    }}\n", "    }}\n    out[i] = scale(tile[i]);\n")
    [finding] = check_files({"gpu/k.h": marked(cuda_body=moved)}, config()).findings
    assert "call `scale` is nested 1 deep in Metal and 0 deep in CUDA" in finding.message


def test_a_change_to_one_twin_only_is_flagged_with_both_locations():
    base = marked()
    head = marked(cuda_body=CUDA_ADD.replace("i < 64", "i < 32"))  # same shape, different code
    report = check_change({"gpu/k.h": base}, {"gpu/k.h": head}, config())
    [finding] = report.findings
    assert finding.rule == "one-sided-change"
    assert "edits the CUDA block `vector_add` (gpu/k.h:12-19) but not its Metal twin (gpu/k.h:3-9)" in finding.message
    assert [loc.line for loc in finding.locations] == [12, 3]
    both = marked(cuda_body=CUDA_ADD.replace("i < 64", "i < 32")).replace("if (i < 64)", "if (i < 32)")
    assert check_change({"gpu/k.h": base}, {"gpu/k.h": both}, config()).findings == ()
    comment_only = base.replace("#pragma once", "#pragma once\n// a note")
    assert check_change({"gpu/k.h": base}, {"gpu/k.h": comment_only}, config()).findings == ()


def test_a_pair_renamed_on_both_sides_is_fine_but_one_side_renamed_is_a_missing_twin():
    base = {"gpu/k.h": marked()}
    assert check_change(base, {"gpu/k.h": marked("vec_add", "vec_add")}, config()).findings == ()
    findings = check_change(base, {"gpu/k.h": marked("vec_add", "vector_add")}, config()).findings
    assert [(f.rule, f.message.split(" (")[0]) for f in findings] == [
        ("missing-twin", "Metal block `vec_add`"), ("missing-twin", "CUDA block `vector_add`")]
    prefixed = METAL_ADD.format(name="metal_add") + CUDA_ADD.format(name="cuda_add")
    renamed = METAL_ADD.format(name="metal_sum") + CUDA_ADD.format(name="cuda_add")
    assert check_change({"gpu/k.h": prefixed}, {"gpu/k.h": renamed},
                        config("prefix")).findings[0].rule == "missing-twin"


def test_two_blocks_of_one_name_and_a_marker_without_a_name_are_findings():
    text = marked() + "// @cuda vector_add\n__global__ void again() {}\n// @metal\nvoid x() {}\n"
    rules = sorted(f.rule for f in check_files({"gpu/k.h": text}, config()).findings)
    assert rules == ["bad-marker", "duplicate-block"]


def test_the_globs_follow_gits_rules():
    parity = config()
    assert parity.covers("gpu/kernels.h") and parity.covers("gpu/metal/deep/k.h") and not parity.covers("gpu/k.c")
    flat = parse_repo_config('[parity]\nfiles = ["runtime/gpu/*.h"]\n').parity
    assert flat.covers("runtime/gpu/k.h") and not flat.covers("runtime/gpu/sub/k.h")


@pytest.mark.parametrize("text, key, line", [
    ('[parity]\nstyle = "markers"\n', "parity.files", 1),
    ('[parity]\nfiles = ["gpu/*.h"]\nstlye = "ifdef"\n', "parity.stlye", 3),
    ('[parity]\nfiles = ["../x.h"]\n', "parity.files", 2),
    ('[parity]\nfiles = ["g/*.h"]\nstyle = "regex"\n', "parity.style", 3),
    ('[parity]\nfiles = ["g/*.h"]\nstyle = "prefix"\nmetal = "@metal"\n', "parity.metal", 4),
    ('[parity]\nfiles = ["g/*.h"]\nmetal = "@x"\ncuda = "@x"\n', "parity.cuda", 4),
    ('[parity]\nfiles = ["g/*.h"]\n[parity.names]\nthreadgroup = ""\n', "parity.names.threadgroup", 4),
    ('[parity]\nfiles = ["g/*.h"]\n[parity.names]\n"not-an-id" = "x"\n', "parity.names.not-an-id", 4),
])
def test_bad_parity_settings_name_the_key_and_line(text, key, line):
    with pytest.raises(ConfigFileError) as caught:
        parse_repo_config(text)
    assert (caught.value.key, caught.value.line) == (key, line), str(caught.value)


def test_defaults_follow_the_style_and_no_section_means_off():
    assert not parse_repo_config("").parity.declared
    parity = parse_repo_config('[parity]\nfiles = ["g/*.h"]\nstyle = "ifdef"\n').parity
    assert (parity.metal, parity.cuda, parity.declared) == ("__METAL_VERSION__", "__CUDACC__", True)


@pytest.mark.parametrize("style", ["markers", "ifdef", "prefix"])
def test_a_drift_is_found_in_every_style(style):
    cuda = CUDA_ADD.replace("        out[i] = scale(tile[i]);\n", "        out[i] = tile[i];\n")
    if style == "markers":
        text = "/* @metal add */\n" + METAL_ADD.format(name="add") + "/* @cuda add */\n" + cuda.format(name="add")
    elif style == "ifdef":
        text = ("#ifdef __METAL_VERSION__\n" + METAL_ADD.format(name="add") + "#elif defined(__CUDACC__) // nvcc\n"
                + cuda.format(name="add") + "#endif\n")
    else:
        text = METAL_ADD.format(name="metal_add") + cuda.format(name="cuda_add")
    [finding] = check_files({"gpu/k.h": text}, config(style)).findings
    assert finding.rule == "drifted-twin"
    assert "Metal has call `scale` where CUDA has call `__syncthreads`" in finding.message


def test_a_marker_at_the_end_of_a_file_without_a_newline_is_reported():
    [finding] = check_files({"gpu/k.h": marked() + "// @metal tail"}, config()).findings
    assert finding.rule == "bad-marker" and finding.locations[0].line == marked().count("\n") + 1
    assert "marker `@metal tail` is followed by no code" in finding.message


def test_brace_style_is_not_shape_but_nesting_is():
    braced = CUDA_ADD.replace("    if (i < 64) {{\n        out[i] = scale(tile[i]);\n    }}\n",
                              "    if (i < 64)\n        out[i] = scale(tile[i]);\n")
    assert braced != CUDA_ADD
    assert check_files({"gpu/k.h": marked(cuda_body=braced)}, config()).findings == ()
    chained = ("// @metal pick\nint pick(int a) {\n    if (a > 1) { return f(a); } else if (a > 0) { return g(a); }\n"
               "    for (int k = 0; k < a; k++) if (k) h(k);\n    do a--; while (a > 0);\n    return 0;\n}\n"
               "// @cuda pick\nint pick(int a) {\n    if (a > 1)\n        return f(a);\n    else if (a > 0)\n"
               "        return g(a);\n    for (int k = 0; k < a; k++) {\n        if (k) {\n            h(k);\n"
               "        }\n    }\n    do {\n        a--;\n    } while (a > 0);\n    return 0;\n}\n")
    assert check_files({"gpu/k.h": chained}, config()).findings == ()
    outside = chained.replace("            h(k);\n        }\n", "        }\n        h(k);\n")
    [finding] = check_files({"gpu/k.h": outside}, config()).findings
    assert "call `h` is nested 2 deep in Metal and 1 deep in CUDA" in finding.message
