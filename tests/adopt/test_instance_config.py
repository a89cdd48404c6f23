"""Two configurations, two owners: the instance file (the operator's) says where and how contained reports' code
runs; `.perfbot.toml` (the repository's) may narrow that, never widen it, and its operator keys are refused."""
from __future__ import annotations

import re
from pathlib import Path

import pytest

from bot.config import ConfigError, Settings
from bot.core.config import ConfigFileError, parse_repo_config
from bot.core.config.instance import OperatorConfig, parse_instance_config, source_allowed

RUNNERS = """\
[[runners]]
name = "mini-1"
kind = "ssh"
host = "mini-1.lan"
user = "bench"
labels = ["c", "metal"]

[[runners]]
name = "rtx"
kind = "ssh"
host = "rtx-box"
labels = ["cuda"]
"""


def operator(text: str) -> OperatorConfig:
    return parse_instance_config(text)[1]


def effective(instance: str, repo: str = ""):
    return operator(instance).narrow(parse_repo_config(repo))


def test_the_runners_come_from_the_instance_file():
    config = effective(RUNNERS)
    assert config.runner_for("metal").name == "mini-1" and config.runner_for("cuda").host == "rtx-box"
    assert config.operator.runners_named
    bare = effective("")
    assert bare.runner_for("c").kind == "local" and not bare.operator.runners_named


@pytest.mark.parametrize("text, where", [
    ("[[runners]]\nname = \"x\"\nkind = \"ssh\"\nlabels = [\"c\"]\n", ":1: runners.host: ssh runner x needs a host"),
    ("[[runners]]\nname = \"x\"\nkind = \"ssh\"\nhost = \"-oProxyCommand=evil\"\nlabels = [\"c\"]\n",
     ":4: runners.host: '-oProxyCommand=evil' is not a valid host"),
    ("[[runners]]\nname = \"x\"\nkind = \"local\"\nlabels = [\"gpu\"]\n", ":4: runners.labels:"),
    ('[[runners]]\nname = "a"\nkind = "local"\nlabels = ["c"]\n[[runners]]\nname = "a"\nkind = "local"\n'
     'labels = ["c"]\n', ":6: runners.name: two runners share the name 'a'"),
    ('[sandbox]\nreadable = ["/srv//data"]\n', ":2: sandbox.readable: '/srv//data' must be an absolute folder"),
    ('[sandbox]\nreadable = ["opt/x"]\n', ":2: sandbox.readable: 'opt/x' must be an absolute folder"),
    ('[sandbox]\nreadable = ["/opt/../root"]\n', ":2: sandbox.readable: '/opt/../root' must be an absolute folder"),
    ('[sandbox]\nprocess = 5\n', ":2: sandbox.process: unknown key; did you mean 'processes'"),
    ('[[runners]]\nname = "x"\nkind = "local"\nlabels = ["c"]\nsandbox = "off"\n',
     ":5: runners.sandbox: 'off' is not one of bwrap, none"),
    ('[[runners]]\nname = "x"\nkind = "actions"\nlabels = ["c"]\nsandbox = "none"\n',
     ":5: runners.sandbox: does not apply to actions"),
    ('[references]\nallow = ["https://github.com/org"]\n', ":2: references.allow: 'https://github.com/org' must "
                                                          "be a URL prefix ending in '/'"),
    ('[llm]\nreviews_per_hour = 0\n', ":2: llm.reviews_per_hour: 0 must be a positive whole number"),
    ('[limits]\nmemory_gb = 4\n', ":2: limits.memory_gb: unknown key; did you mean 'memory_mb'"),
])
def test_instance_file_mistakes_name_the_key_and_the_line(text, where):
    with pytest.raises(ConfigFileError, match=re.escape("instance/perfbot.toml" + where)):
        operator(text)


def test_an_ssh_runner_may_name_its_remote_folder_and_only_a_plain_one():
    base = '[[runners]]\nname = "mini"\nkind = "ssh"\nhost = "mini.lan"\nlabels = ["c"]\n'
    assert operator(base).runners[0].path is None  # the runner's default: ~/.cache/perfbot/<name>
    for good in ("~/bench/perfbot", "/srv/bench-1/perfbot_cache", "~/.cache/perf.bot"):
        assert operator(base + f'path = "{good}"\n').runners[0].path == good
    for bad in ("bench", "~/../etc", "/srv/../etc", "/tmp/$(id)", "~/a b", "~root/x", "/", "~/", "/x;rm -rf ~",
                "-oProxyCommand=x", "/x\\ny"):
        with pytest.raises(ConfigFileError, match="absolute or ~/ folder") as info:
            operator(base + f'path = "{bad}"\n')
        assert (info.value.key, info.value.line) == ("runners.path", 6)
    with pytest.raises(ConfigFileError, match="is for ssh runners"):
        operator('[[runners]]\nname = "l"\nkind = "local"\npath = "/srv/x"\nlabels = ["c"]\n')


@pytest.mark.parametrize("text, key, line", [
    ('[verify]\nseq_threshold = 2.0\n\n[[runners]]\nname = "here"\nkind = "local"\nlabels = ["c"]\n'
     'sandbox = "none"\n', "runners", 4),
    ('[run]\nlanguage = ["./run", "{file}"]\n[sandbox]\nreadable = ["/srv"]\n', "sandbox", 3),
    ('[sandbox]\nprocesses = 4\n', "sandbox", 1),
    ('[verify]\nmemory_mb = 64\n\n[limits]\nmemory_mb = 999999\n', "limits", 4),
    ('[llm]\nreviews_per_push = 100000\n', "llm", 1),
    ('[service]\ngithub_api_url = "http://127.0.0.1/"\n', "service", 1),
    ('[references.old]\nrun = ["./old", "{file}"]\n\n[references]\nallow = ["file:///"]\n', "references.allow", 5),
])
def test_the_repository_cannot_set_runners_or_the_sandbox(text, key, line):
    """A `.perfbot.toml` on main that names a local runner without a sandbox, or a readable folder, or raises a
    ceiling, a budget or its own reference sources, is refused at the key's line, and the message says where
    the key belongs: the instance file."""
    with pytest.raises(ConfigFileError) as info:
        parse_repo_config(text)
    assert (info.value.key, info.value.line) == (key, line), str(info.value)
    assert "instance/perfbot.toml" in str(info.value) and str(info.value).startswith(f".perfbot.toml:{line}:")


def test_the_repository_narrows_the_operators_ceilings_and_never_widens_them():
    instance = ('[sandbox]\nprocesses = 64\noutput_mb = 4\nreadable = ["/srv/datasets"]\n'
                '[limits]\nmemory_mb = 1024\ntimeout_seconds = 30\nthreads = 8\n')
    wide = effective(instance, "[verify]\nmemory_mb = 65536\ntimeout_seconds = 900\nprocesses = 100000\n"
                               "threads = [1, 4, 16, 64]\n")
    assert (wide.verify.memory_mb, wide.verify.timeout_seconds, wide.operator.sandbox.processes) == (1024, 30, 64)
    assert wide.verify.threads == (1, 4)
    assert wide.operator.sandbox.readable == ("/srv/datasets",) and wide.operator.sandbox.output_mb == 4
    narrow = effective(instance, "[verify]\nmemory_mb = 256\ntimeout_seconds = 5\nprocesses = 8\nthreads = [1, 2]\n")
    assert (narrow.verify.memory_mb, narrow.verify.timeout_seconds, narrow.operator.sandbox.processes) == (256, 5, 8)
    assert narrow.verify.threads == (1, 2)


def test_only_the_operator_turns_the_sandbox_off():
    mac = operator('[[runners]]\nname = "mac"\nkind = "ssh"\nhost = "mac-mini"\nlabels = ["metal"]\nsandbox = "none"\n')
    assert mac.runners[0].sandbox == "none" and mac.runners_named
    assert operator("").runners[0].sandbox == "bwrap"
    assert operator("").without_sandbox().runners[0].sandbox == "none"  # `perfbot verify --no-sandbox`


def test_reference_sources_are_the_operators_prefixes():
    allowed = ("https://github.com/org/",)
    assert source_allowed("https://github.com/org/runtime-v1", allowed)
    for url in ("https://github.com/other/x", "https://github.com/org/../other/x", "https://github.com.evil/org/x",
                "file:///srv/perfbot/instance/repos/a", "http://169.254.169.254/latest", "https://github.com/org/a b"):
        assert not source_allowed(url, allowed), url
    assert not source_allowed("https://github.com/org/x", ())


@pytest.mark.parametrize("repository", ["/srv/perfbot/instance/repos/other", "../other", "instance/repos/x",
                                        "~/clones/x", "file:///srv/../etc"])
def test_a_reference_never_names_a_path(repository):
    """A path, or a URL climbing with `..`, is refused in the file; a URL is fetched only under a prefix the
    operator allows (test_reference_sources_are_the_operators_prefixes), a file:// one included."""
    with pytest.raises(ConfigFileError, match="never a path") as info:
        parse_repo_config(f'[references.old]\nrun = ["./old", "{{file}}"]\nrepository = "{repository}"\n')
    assert (info.value.key, info.value.line) == ("references.old.repository", 3)


def test_settings_read_the_instance_file_beside_the_environment(tmp_path):
    (tmp_path / "perfbot.toml").write_text('[service]\npoll_seconds = 9\nreview_model = "m"\n\n' + RUNNERS +
                                           '[llm]\nreviews_per_push = 3\n')
    settings = Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path), "PERFBOT_REVIEW_MODEL": "from-env"})
    assert settings.poll_seconds == 9 and settings.review_model == "from-env"  # the environment wins
    assert [r.name for r in settings.operator.runners] == ["mini-1", "rtx"]
    assert settings.operator.llm.reviews_per_push == 3
    (tmp_path / "perfbot.toml").write_text('[service]\n\ngithub_token = "ghp_x"\n')
    with pytest.raises(ConfigError, match=r"perfbot.toml:3: service.github_token: .*PERFBOT_GITHUB_TOKEN_FILE"):
        Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path)})
    (tmp_path / "perfbot.toml").write_text('[[runners]]\nname = "x"\nkind = "ssh"\nlabels = ["c"]\n')
    with pytest.raises(ConfigError, match=re.escape(f"{tmp_path / 'perfbot.toml'}:1: runners.host")):
        Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path)})
    (tmp_path / "perfbot.toml").write_text('[service]\nlease_seconds = 0\n')
    with pytest.raises(ConfigError, match=r"service\.lease_seconds"):
        Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path)})
    with pytest.raises(ConfigError, match=r"PERFBOT_LEASE_SECONDS='x'"):
        Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path / "none"), "PERFBOT_LEASE_SECONDS": "x"})


def test_the_bots_host_is_no_bench_host_unless_the_operator_names_it(tmp_path):
    from bot.adapters.runners import make_runner
    from bot.errors import UserError

    implicit = effective("")
    with pytest.raises(UserError, match=r"never on the bot's own machine.*instance file"):
        make_runner(implicit.operator.runners[0], tmp_path, tmp_path / "cache", implicit, None, service=True)
    cli = make_runner(implicit.operator.runners[0], tmp_path, tmp_path / "cache", implicit, None)
    assert cli.kind == "local"
    named = effective('[[runners]]\nname = "here"\nkind = "local"\nlabels = ["c"]\n'
                      '[sandbox]\nreadable = ["/srv/perfbot/data"]\n')
    here = named.operator.runners[0]
    assert make_runner(here, tmp_path, tmp_path / "cache", named, None, service=True).name == "here"
    with pytest.raises(UserError, match="would show /srv/perfbot, which holds perfbot's own files"):
        make_runner(here, tmp_path, tmp_path / "cache", named, None, private=(Path("/srv/perfbot"),))
