"""The webhook's edges over a real socket: the secrets rotation reads (one a line, or one a variable, never split
on a comma), and JSON nested deeper than any parser should follow."""
from __future__ import annotations

import pytest

import handlers
from bot.adapters.store.engine import Database
from bot.adapters.store.queue import DeliveryQueue
from bot.app import create_app
from bot.config import Settings
from tests.servers import serving
from tests.webhooks import post_delivery

PUSH = {"ref": "refs/heads/main", "repository": {"full_name": "acme/runtime"}}


@pytest.fixture
def database(tmp_path):
    """SQLite only: what is tested here happens before the store (test_webhook.py covers both stores)."""
    db = Database(f"sqlite:///{tmp_path / 'perfbot.sqlite3'}")
    yield db
    db.dispose()


def accepted(database, tmp_path, environ: dict, keys: list[str]) -> list[str]:
    """Which of `keys` sign a delivery the service configured from `environ` stores."""
    settings = Settings.from_env({"PERFBOT_INSTANCE_DIR": str(tmp_path), **environ}, database_url=database.url)
    app = create_app(settings, DeliveryQueue(database), wanted_events=handlers.github_events())
    with serving(app) as url:
        return [key for n, key in enumerate(keys)
                if post_delivery(url, "push", PUSH, secret=key, delivery=f"key-{n}").status_code == 202]


def test_a_comma_is_part_of_a_secret_never_a_separator(database, tmp_path):
    assert accepted(database, tmp_path, {"PERFBOT_WEBHOOK_SECRET": "Tr0ub4dor,x"},
                    ["x", "Tr0ub4dor", "Tr0ub4dor,x"]) == ["Tr0ub4dor,x"]


@pytest.mark.parametrize("how", ["lines", "variables", "files"])
def test_rotation_accepts_the_new_and_the_old_secret(database, tmp_path, how):
    new, old = "new-secret,with-comma", "old secret"
    if how == "lines":
        environ = {"PERFBOT_WEBHOOK_SECRET": f"{new}\r\n{old}\n"}
    elif how == "variables":
        environ = {"PERFBOT_WEBHOOK_SECRET": new, "PERFBOT_WEBHOOK_SECRET_2": old}
    else:
        (tmp_path / "new").write_text(new + "\n")
        (tmp_path / "old").write_text(old + "\n")
        environ = {"PERFBOT_WEBHOOK_SECRET_FILE": str(tmp_path / "new"),
                   "PERFBOT_WEBHOOK_SECRET_2_FILE": str(tmp_path / "old")}
    assert accepted(database, tmp_path, environ, [new, old, "new-secret", "with-comma", "forged"]) == [new, old]


@pytest.mark.parametrize("opener, closer", [("[", "]"), ('{"a":', "}")])
def test_json_nested_100000_deep_gets_a_json_400_and_stores_nothing(database, tmp_path, opener, closer):
    app = create_app(Settings(instance_dir=tmp_path, database_url=database.url, webhook_secrets=("s3cret",)),
                     DeliveryQueue(database), wanted_events=handlers.github_events())
    body = (opener * 100_000 + "1" + closer * 100_000).encode()
    with serving(app) as url:
        response = post_delivery(url, "push", body, secret="s3cret")
    assert response.status_code == 400 and "nested too deeply" in response.json()["error"]
    assert DeliveryQueue(database).counts() == {}


@pytest.mark.parametrize("value", [2**63, -(2**63) - 1, 10**400])
def test_an_integer_out_of_range_in_a_signed_payload_gets_a_400_and_stores_nothing(database, tmp_path, value):
    """A signed delivery whose comment id or issue number overflows a 64-bit column was acknowledged (202) and
    then failed in the store with an OverflowError: it is refused at the door now."""
    app = create_app(Settings(instance_dir=tmp_path, database_url=database.url, webhook_secrets=("s3cret",)),
                     DeliveryQueue(database), wanted_events=handlers.github_events())
    payload = {"action": "created", "repository": {"full_name": "acme/runtime"}, "installation": {"id": 7},
               "issue": {"number": value}, "comment": {"id": 1, "body": "/perf verify"}}
    with serving(app) as url:
        response = post_delivery(url, "issue_comment", payload, secret="s3cret")
        fits = post_delivery(url, "issue_comment", {**payload, "issue": {"number": 2**63 - 1}}, secret="s3cret")
    assert response.status_code == 400 and "64 signed bits" in response.json()["error"]
    assert fits.status_code == 202
    assert DeliveryQueue(database).counts() == {"pending": 1}
