"""The demo's paired GPU code: one header with Metal and CUDA twins side by side, and a branch that breaks them."""
from __future__ import annotations

KERNELS_PATH = "gpu/kernels.h"
PARITY_BRANCH = "gpu/cuda-early-exit"

README_PART = f"""
GPU backends: `{KERNELS_PATH}` keeps each kernel as a Metal and a CUDA twin (`// @metal NAME`,
`// @cuda NAME`); branch `{PARITY_BRANCH}` changes the CUDA side only:

    perfbot parity gpu                                  # main: the twins are in step
    git checkout {PARITY_BRANCH}
    perfbot parity gpu --base main                      # a drifted twin, changed on one side only
    git checkout main
"""

PARITY_CONFIG = """
# The parity guard (bot/core/config/parity.py): each // @cuda NAME block has a // @metal NAME twin in the
# same file, with the same calls, branches and loops once Metal's names are spelled the CUDA way.
[parity]
files = ["gpu/*.h"]
style = "markers"

[parity.names]
threadgroup = "__shared__"
thread_position_in_grid = "blockIdx*blockDim+threadIdx"
thread_position_in_threadgroup = "threadIdx"
threadgroup_barrier = "__syncthreads"
atomic_fetch_add_explicit = "atomicAdd"
"""

KERNELS = """// GPU backends of the runtime's `sum N`: the Metal and the CUDA version of each kernel, side by side,
// so that a fix in one is made in the other (perfbot's parity guard checks that they stay twins).
#pragma once

#define SUM_GROUP 256

// @metal sum_squares
kernel void sum_squares(device const uint* n [[buffer(0)]], device atomic_uint* total [[buffer(1)]],
                        uint i [[thread_position_in_grid]], uint lane [[thread_position_in_threadgroup]]) {
    threadgroup uint partial[SUM_GROUP];
    partial[lane] = i < *n ? (i * i) & 0xFFFFFF : 0;
    threadgroup_barrier(mem_flags::mem_threadgroup);
    for (uint stride = SUM_GROUP / 2; stride > 0; stride /= 2) {
        if (lane < stride) {
            partial[lane] = (partial[lane] + partial[lane + stride]) & 0xFFFFFF;
        }
        threadgroup_barrier(mem_flags::mem_threadgroup);
    }
    if (lane == 0) {
        atomic_fetch_add_explicit(total, partial[0], memory_order_relaxed);
    }
}

// @cuda sum_squares
__global__ void sum_squares(const unsigned* n, unsigned* total) {
    unsigned i = blockIdx.x * blockDim.x + threadIdx.x, lane = threadIdx.x;
    __shared__ unsigned partial[SUM_GROUP];
    partial[lane] = i < *n ? (i * i) & 0xFFFFFF : 0;
    __syncthreads();
    for (unsigned stride = SUM_GROUP / 2; stride > 0; stride /= 2) {
        if (lane < stride) {
            partial[lane] = (partial[lane] + partial[lane + stride]) & 0xFFFFFF;
        }
        __syncthreads();
    }
    if (lane == 0) {
        atomicAdd(total, partial[0]);
    }
}
"""
# The branch: threads past the end leave early on CUDA only. The twins' shapes now differ (a branch and a
# return where Metal has a conditional expression; and a thread that leaves never reaches __syncthreads), and
# only one side changed: both findings name both blocks.
KERNELS_BROKEN = KERNELS.replace(
    "    __shared__ unsigned partial[SUM_GROUP];\n    partial[lane] = i < *n ? (i * i) & 0xFFFFFF : 0;\n",
    "    __shared__ unsigned partial[SUM_GROUP];\n    if (i >= *n) {\n        return;\n    }\n"
    "    partial[lane] = (i * i) & 0xFFFFFF;\n")
