"""The Metal/CUDA parity guard, in one package: change the parity check here.

    blocks.py, check.py, view.py   pure (held to the core's rules): a file's Metal and CUDA blocks, twins compared
                                   (missing, drifted, changed on one side only), the report as text, JSON, a check
                                   run's summary and annotations, the digest's rows
    flow.py                        `[parity]` read from the default branch, a PR's range or a branch checked, the
                                   check run published (the services' place)

Entries stay where perfbot lists them and call in: `perfbot parity` (bot/cli/parity_cmd.py), a pull request's new
head and the branches' check through the Fixes use case (services/usecases/fixes.py), and the digest's parity
section (bot/digest/). `[parity]` itself stays a section of the one .perfbot.toml model (core/config/parity.py):
the core imports no feature package. The demo's twins (bot/demo/parity.py) are demo data and stay with the demo.
"""
