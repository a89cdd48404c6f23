"""What leaves perfbot is bounded and clean: secrets scrubbed at both walls, GitHub's size limit kept."""
from __future__ import annotations

from bot.adapters.local_issues import FileIssues
from bot.adapters.runners import LocalRunner
from bot.config import Settings
from bot.core.tracker.outgoing import GITHUB_TEXT_LIMIT, REDACTED, Outgoing, fit, scrub, window
from bot.services.posting import CleanTracker
from tests.github_double.routes_common import BODY_LIMIT
from tests.reading.test_github_mirror import REPO, issues, sync_and_mirror, tracker  # noqa: F401  (fixture)
from tests.reports import canonical_report


def test_fit_cuts_at_a_line_closes_an_open_fence_and_says_why():
    text = "intro\n```c\n" + "int x;\n" * 20_000 + "```\nend\n"
    cut = fit(text, 10_000, "read it whole in [the file](https://x/f.md)")
    assert len(cut) <= 10_000 and cut.startswith("intro\n```c\nint x;\n")
    assert cut.count("```") % 2 == 0  # the code block is closed, so the note is not inside it
    assert cut.endswith("> **Cut by perfbot:** read it whole in [the file](https://x/f.md)\n")
    assert fit("short", 10_000) == "short"


def test_scrub_replaces_every_secret_longest_first():
    assert scrub("token ghp_abcdefgh and ghp_abcdefgh-long", ("ghp_abcdefgh-long", "ghp_abcdefgh")) == \
        f"token {REDACTED} and {REDACTED}"


def test_a_program_output_is_shown_through_a_window():
    assert window("1\n2\n") == "1\n2\n"
    shown = window("line\n" * 10_000)
    assert shown.count("line") == 40 and shown.endswith("(49,801 more characters not shown)")


def test_settings_name_every_secret_for_the_scrubber(tmp_path):
    key = tmp_path / "id_ed25519"
    key.write_text("-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ\n"
                   "-----END OPENSSH PRIVATE KEY-----\n")
    settings = Settings(instance_dir=tmp_path, database_url="sqlite://", github_token="ghp_token_value",
                        webhook_secrets=("Tr0ub4dor-x",),
                        anthropic_api_key="sk-ant-api-key", ssh_key=key)
    secrets = settings.secret_values()
    assert {"ghp_token_value", "Tr0ub4dor-x", "sk-ant-api-key",
            "b3BlbnNzaC1rZXktdjEAAAAABG5vbmUAAAAEbm9uZQ"} <= set(secrets)
    assert settings.private_folders()[0] == tmp_path.resolve()


def test_every_tracker_write_is_scrubbed_and_fits(tmp_path):
    files = FileIssues(tmp_path / "issues")
    clean = CleanTracker(files, Outgoing(("ghp_token_value",)))
    number = clean.create_issue("title ghp_token_value", "body ghp_token_value\n" + "x" * 100_000, ("perfbot",))
    clean.upsert_comment(number, "<!-- perfbot:x -->", "<!-- perfbot:x -->\nthe key is ghp_token_value", None)
    written = "".join(p.read_text() for p in (tmp_path / "issues").rglob("*") if p.is_file())
    assert "ghp_token_value" not in written and REDACTED in written
    assert clean.marked_issues() == files.marked_issues()  # reads pass through untouched


def test_what_a_run_prints_is_scrubbed_before_perfbot_reads_it(tmp_path):
    runner = LocalRunner("local", tmp_path, tmp_path / "cache", build=None, secrets=("s3cr3t-value-123",))
    result = runner.run(["echo", "leaked s3cr3t-value-123"], tmp_path, 10)
    assert result.stdout == f"leaked {REDACTED}\n"


def test_a_report_longer_than_an_issue_is_mirrored_shortened_and_blocks_nothing(database, git_repo, tracker,
                                                                                  github):
    long = canonical_report("perf_long", extra_prose="A very long context line.\n" * 3_700)
    assert len(long) > 97_000
    git_repo.write("devs/issues/perf_long.md", long).write("devs/issues/perf_b.md", canonical_report("perf_b"))
    git_repo.commit("a huge report beside a normal one")
    summary = sync_and_mirror(database, git_repo, tracker)
    bodies = {title.split(":")[0]: body for title, *_, body in issues(github).values()}
    assert set(bodies) == {"perf_long", "perf_b"}, summary  # the huge one did not stop the other
    assert BODY_LIMIT - 1_000 < len(bodies["perf_long"]) <= GITHUB_TEXT_LIMIT
    assert "read it whole in [`devs/issues/perf_long.md`]" in bodies["perf_long"]
    assert bodies["perf_long"].rstrip().endswith("</details>")  # the fold still closes after the cut
    assert "Cut by perfbot" not in bodies["perf_b"]


def test_the_scrub_catches_a_secret_reversed_encoded_or_in_part():
    """A report that read /proc/<perfbot>/environ posted the token reversed, past an exact-match scrub; every
    form a program can print a secret in is caught, and ordinary text is left alone."""
    import base64

    token = "ghp_R3alT0kenValue0123456789abcdef"
    forms = {
        "whole": token,
        "reversed": token[::-1],
        "base64": base64.b64encode(token.encode()).decode(),
        "base64 inside more": base64.b64encode(f"GITHUB_TOKEN={token}\nHOME=/root\n".encode()).decode(),
        "urlsafe base64": base64.urlsafe_b64encode(("xy" + token).encode()).decode(),
        "a 12-character piece": f"starts {token[3:15]} ends",
        "a reversed piece": token[::-1][5:19],
    }
    for name, text in forms.items():
        cleaned = scrub(text, (token,))
        assert REDACTED in cleaned, name
        assert token[3:15] not in cleaned and token[::-1][5:17] not in cleaned, (name, cleaned)
    assert scrub(f"only {token[:11]} is too short to tell", (token,)) == f"only {token[:11]} is too short to tell"
    assert scrub("a plain sentence about u24 arithmetic", (token,)) == "a plain sentence about u24 arithmetic"


def test_the_log_and_the_posting_wall_scrub_one_secret_list(tmp_path):
    """Settings.secret_values is the one list: what the log masks, a comment never carries, and back."""
    from bot.app.logs import MASK, Redactor, secrets_of

    settings = Settings(instance_dir=tmp_path, database_url="postgresql+psycopg://perfbot:Db-Passw0rd-42@db/p",
                        github_token="ghp_token_value_0123", dashboard_token="dash-token-abcdef")
    assert set(secrets_of(settings)) == set(settings.secret_values()) >= {"Db-Passw0rd-42", "dash-token-abcdef"}
    leaked = "password 24-dr0wssaP-bD and ghp_token_value_0123"[::-1]
    logged = Redactor(secrets_of(settings))(leaked)
    assert "Db-Passw0rd" not in logged and MASK in logged
    assert "Db-Passw0rd" not in Outgoing(settings.secret_values())(leaked)


def test_a_message_names_the_instance_folder_not_where_it_lies(tmp_path):
    instance = tmp_path / "srv" / "perfbot" / "instance"
    settings = Settings(instance_dir=instance, database_url="sqlite://")
    out = Outgoing(settings.secret_values(), folders=settings.shown_folders())
    said = out(f"cannot fetch: fatal: {instance.resolve()}/repos/other-org/secret.git is not a repository")
    assert str(tmp_path) not in said and "instance/repos/other-org/secret.git" in said
