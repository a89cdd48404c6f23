"""`.perfbot.toml`, one typed model: every key known, every value checked, every error naming its key and line.

model.py holds the file (`PerfbotFile`), which is the configuration perfbot reads; each section's module says
what its keys mean. `perfbot config schema` prints the JSON Schema the model exports.
"""
from bot.core.config.build import BuildScript, build_argv, fill, script_problem
from bot.core.config.errors import ConfigFileError
from bot.core.config.hosts import GpuSettings, NotifySettings, SandboxSettings
from bot.core.config.model import PerfbotFile, json_schema, parse_repo_config
from bot.core.config.parity import ParityConfig, glob_regex
from bot.core.config.run import MEASURES, PROGRAM_NAME, New, Reference, measure_problem, par_measure_problem
from bot.core.config.runners import Runner, Suite
from bot.core.config.schedules import DigestSchedule, GuardSettings, Milestone
from bot.core.config.values import remote_path_ok

__all__ = [
           "MEASURES",
           "PROGRAM_NAME",
           "BuildScript",
           "ConfigFileError",
           "DigestSchedule",
           "GpuSettings",
           "GuardSettings",
           "Milestone",
           "New",
           "NotifySettings",
           "ParityConfig",
           "PerfbotFile",
           "Reference",
           "Runner",
           "SandboxSettings",
           "Suite",
           "build_argv",
           "fill",
           "glob_regex",
           "json_schema",
           "measure_problem",
           "par_measure_problem",
           "parse_repo_config",
           "remote_path_ok",
           "script_problem",
]
