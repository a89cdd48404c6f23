"""Serving a WSGI app on a real loopback socket in a background thread, for tests that speak HTTP."""
from __future__ import annotations

import threading
from contextlib import contextmanager
from typing import Iterator

from werkzeug.serving import make_server


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
