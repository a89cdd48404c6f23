"""The Metal/CUDA parity guard: blocks found in a source file, twins compared, the report."""
