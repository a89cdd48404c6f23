"""`.perfbot.toml` errors point at the value at fault, inside repeated tables too; the model exports its schema."""
from __future__ import annotations

import tomllib

import jsonschema
import pytest

from bot.core.config import ConfigFileError, json_schema, parse_repo_config
from bot.core.config.instance import parse_instance_config
from bot.core.config.lines import key_lines

TWO_RUNNERS = """\
[[runners]]
name = "mini"
kind = "ssh"
host = "mini.lan"
labels = ["c"]

[[runners]]
name = "rtx"
kind = "ssh"
labels = ["cuda"]
"""


@pytest.mark.parametrize("text, key, line", [
    (TWO_RUNNERS.replace('labels = ["cuda"]', 'host = "-oProxyCommand=x"\nlabels = ["cuda"]'), "runners.host", 10),
    (TWO_RUNNERS, "runners.host", 7),  # the second runner has no host: its own table's line
    (TWO_RUNNERS.replace('name = "rtx"', 'name = "mini"').replace('labels = ["cuda"]', 'host = "h"\nlabels = ["c"]'),
     "runners.name", 8),
    ('[digest]\ntimezone = "UTC"\n\n[guards]\ntimezone = "Mars/Olympus"\n', "guards.timezone", 5),
    ('[digest]\ntimezone = "UTC"\n\n[guards]\nbisect = true\n[guards.extra]\n', "guards.extra", 6),
    ('[build]\ncommand = ["make"]\n\n[suite]\nformat = "tsv"\n', "suite.command", 4),
    ('[build]\ncommand = ["make"]\n\n[suite]\ncommand = "make bench"\n', "suite.command", 5),
    ('[references.a]\nrun = ["a"]\nbranch = "v1"\n\n[references.b]\nrun = ["b"]\nbranch = "--x"\n',
     "references.b.branch", 7),
    ('[run]\noutput = "normalize"\nnormalize = [\n  ["a", "b"],\n  ["c", "host = 1"],\n]\nprogram = "../x"\n',
     "run.program", 7),  # lines inside a multi-line array are no keys
    ('[run]\nlanguage = ["x", """\nprogram = 1\n"""]\nprogram = "../x"\n', "run.program", 5),  # nor in strings
    ('[run]\noutput = "normalize"\n', "run.normalize", 2),  # missing: shown where the rule asks for it
    ('[[milestones]]\nname = "a"\nkind = "seq-near-c"\n[[milestones]]\nname = "b"\nkind = "par-speedup"\n'
     'reports = ["perf_x"]\n', "milestones.target", 4),
    ('[[runners]]\nname = "a"\nkind = "local"\nlabels = ["c"]\n[[runners]]\nname = "b"\nkind = "local"\n'
     'labels = ["c"]\n[runners.extra]\nx = 1\n', "runners.extra", 9),
])
def test_an_error_in_a_repeated_table_names_that_tables_line(text, key, line):
    parse = parse_instance_config if text.startswith("[[runners]]") else parse_repo_config  # runners: the operator's
    with pytest.raises(ConfigFileError) as info:
        parse(text)
    assert (info.value.key, info.value.line) == (key, line), str(info.value)


def test_the_index_follows_arrays_of_tables_dotted_and_quoted_keys():
    index = key_lines('a.b = 1\n"c.d" = 2\n[[r]]\nx = 1\n[[r]] # two\nx = [\n 1,\n]\ny = 2\n[r.s]\nz = 3\n')
    assert index[("a", "b")] == 1 and index[("c.d",)] == 2
    assert (index[("r", 0, "x")], index[("r", 1, "x")], index[("r", 1, "y")]) == (4, 6, 9)
    assert (index[("r", 1)], index[("r", 1, "s", "z")]) == (5, 11)


def test_the_json_schema_comes_from_the_model_and_agrees_with_it():
    schema = json_schema()
    assert schema["additionalProperties"] is False and "milestones" in schema["properties"]
    assert "runners" not in schema["properties"] and "sandbox" not in schema["properties"]  # the operator's keys
    good = tomllib.loads('[[milestones]]\nname = "a"\nkind = "seq-near-c"\n'
                         '[verify]\nmeasure = "user"\n[suite]\ncommand = ["make", "bench"]\n')
    jsonschema.validate(good, schema)
    for bad in ({"verify": {"seq_treshold": 2}}, {"verify": {"measure": "cycles"}}, {"runners": [{"name": "x"}]},
                {"sandbox": {"readable": ["/"]}}):
        with pytest.raises(jsonschema.ValidationError):
            jsonschema.validate(bad, schema)


def test_perfbot_config_schema_prints_the_models_schema():
    import json

    from click.testing import CliRunner

    from bot.cli import main

    result = CliRunner().invoke(main, ["config", "schema"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.output) == json.loads(json.dumps(json_schema()))


def test_the_reference_is_generated_from_the_model_and_lists_every_key():
    from bot.core.config import PerfbotFile
    from bot.core.config.errors import _fields_at
    from bot.core.config.reference import reference_markdown

    text = reference_markdown()
    for section in PerfbotFile.model_fields:
        header = {"runners": "[[runners]]", "milestones": "[[milestones]]", "references": "[references.NAME]"}
        assert f"## `{header.get(section, f'[{section}]')}`" in text, section
        path = (section, 0) if section in ("runners", "milestones") else (section, "x") \
            if section == "references" else (section,)
        for key in _fields_at(PerfbotFile, path):
            assert f"| `{key}` |" in text, f"{section}.{key}"
    assert '| `measure` | `"wall"` \\| `"user"` \\| `"instructions"` or string or table | `"wall"` |' in text


def test_the_reference_escapes_what_markdown_would_take_for_html():
    from bot.core.config.reference import reference_markdown

    text = reference_markdown()
    assert "program.&lt;fence tag>" in text
    assert [row for row in text.splitlines() if row.startswith("| `") and "<" in row] == []


def test_every_key_of_the_reference_has_an_example_that_is_toml():
    import tomllib

    from bot.core.config.reference import reference_markdown

    rows = [line.split(" | ") for line in reference_markdown().splitlines() if line.startswith("| `")]
    assert len(rows) > 70
    for key, _, _, example, _ in rows:
        assert example.startswith("`") and example.endswith("`"), key
        line = example.strip("`").replace("\\|", "|")
        assert line.split(" = ", 1)[0] == key.strip("|` ") and tomllib.loads(line), (key, line)
