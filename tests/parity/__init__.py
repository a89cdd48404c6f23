"""The Metal/CUDA parity guard: blocks found, twins compared, the check run and the `perfbot parity` command."""
