"""Serving a WSGI app on a real loopback socket in a background thread, for tests that speak HTTP."""
from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager

from werkzeug.serving import WSGIRequestHandler, make_server


def free_port() -> int:
    """A loopback port nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextmanager
def serving(app) -> Iterator[str]:
    server = make_server("127.0.0.1", 0, app, threaded=True)
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_port}"
    finally:
        server.shutdown()
        thread.join(timeout=5)


class _QuietHandler(WSGIRequestHandler):
    """werkzeug logs every request to stderr; a test suite sends thousands."""

    def log(self, type: str, message: str, *args) -> None:
        pass


class LoopbackServer:
    """start() / stop() / `with` for a double: its WSGI callable on a free loopback port, in a daemon thread."""

    name = "double"
    _server = None
    _thread: threading.Thread | None = None

    def _serve(self, wsgi) -> None:
        self._server = make_server("127.0.0.1", 0, wsgi, threaded=True, request_handler=_QuietHandler)
        # shutdown() waits for the loop's next poll; werkzeug's default of 0.5 s would add that to every test
        self._thread = threading.Thread(target=self._server.serve_forever, kwargs={"poll_interval": 0.02},
                                        name=self.name, daemon=True)
        self._thread.start()

    def stop(self) -> None:
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()
            self._thread.join(timeout=5)
            self._server = None

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc_info) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The API base URL: http://127.0.0.1:PORT."""
        if self._server is None:
            raise RuntimeError(f"the {self.name} is not started: call start() or use it as a context manager")
        return f"http://127.0.0.1:{self._server.server_port}"


def serve_and_check(double):
    """A fixture body for a double: serve it, then fail the test if it saw any problem (a request the real
    API would refuse, an operation it lacks, a bug of its own)."""
    import pytest

    with double:
        yield double
        problems = double.problems()
    if problems:
        pytest.fail(f"the {double.name} saw problems:\n" + "\n".join(problems), pytrace=False)
