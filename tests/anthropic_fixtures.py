"""pytest fixtures for the Anthropic double; import them where needed (`from tests.anthropic_fixtures import *`).

- `anthropic_api`: a started `AnthropicDouble`, one per test. At teardown the test fails if the double saw a
  request the real API would refuse (or that breaks a house rule), a request it cannot answer, a scripting
  mistake or a bug of its own, or if queued answers were never asked for. A test that provokes violations
  on purpose takes them with `anthropic_api.take_violations()` (and script errors with `take_errors()`).
"""
from __future__ import annotations

import pytest

from tests.anthropic_double import AnthropicDouble
from tests.servers import serve_and_check

__all__ = ["anthropic_api"]


@pytest.fixture
def anthropic_api():
    yield from serve_and_check(AnthropicDouble())
