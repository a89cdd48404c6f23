"""pytest fixtures for the GitHub double; import them into a conftest (`from tests.github_fixtures import *`).

- `github`: a started `GitHubDouble`, one per test. At teardown the test fails if the double saw a request
  GitHub's OpenAPI description rejects, an operation it does not implement, or a bug of its own; a test that
  provokes violations on purpose takes them with `github.take_violations()`.
- `github_app_key`: an RSA private key (PEM) for GitHub App tests, made once per session.
"""
from __future__ import annotations

import pytest

from tests.github_double import GitHubDouble
from tests.servers import serve_and_check

__all__ = ["github", "github_app_key"]


@pytest.fixture
def github():
    yield from serve_and_check(GitHubDouble())


@pytest.fixture(scope="session")
def github_app_key() -> str:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import rsa

    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption()).decode()
