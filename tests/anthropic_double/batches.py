"""The Message Batches API: create, retrieve (poll), list, results (JSONL), cancel, delete.

A batch's own shape is checked when it is created (400 for a missing or malformed `requests` list, bad or
duplicate `custom_id`s). The `params` of each request are checked when the batch is processed, as the
real API does: a request the API would refuse becomes an `errored` result (and a violation), not a 400.

Processing happens all at once, when the batch ends: right after the create request when
`polls_before_end` is 0 (the create answer still says "in_progress", as the API's does), otherwise on the
retrieve that follows `polls_before_end` retrieves answered "in_progress". A cancel moves the batch to
"canceling"; the next retrieve ends it with every request canceled. Results are served in reverse request
order, because the API promises no order and clients must match them by `custom_id`.
"""
from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from .errors import ApiError, invalid, new_id

CUSTOM_ID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")
MAX_REQUESTS = 100_000
Processor = Callable[[dict, str], dict]  # (params, anthropic-version) -> a result: {"type": "succeeded", ...}


def rfc3339(moment: datetime | None) -> str | None:
    return moment.isoformat(timespec="microseconds").replace("+00:00", "Z") if moment else None


@dataclass
class Batch:
    id: str
    requests: list[tuple[str, dict]]  # (custom_id, params) in the order they were sent
    version: str  # the anthropic-version of the create request: the params are judged by it
    polls_left: int
    created_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    status: str = "in_progress"
    cancel_initiated_at: datetime | None = None
    ended_at: datetime | None = None
    results: list[dict] | None = None  # JSONL lines, once ended

    def counts(self) -> dict[str, int]:
        counts = dict.fromkeys(("processing", "succeeded", "errored", "canceled", "expired"), 0)
        if self.results is None:
            counts["processing"] = len(self.requests)
        else:
            for line in self.results:
                counts[line["result"]["type"]] += 1
        return counts

    def to_json(self, base_url: str) -> dict:
        return {
            "id": self.id, "type": "message_batch", "processing_status": self.status,
            "request_counts": self.counts(), "created_at": rfc3339(self.created_at),
            "expires_at": rfc3339(self.created_at + timedelta(hours=24)), "ended_at": rfc3339(self.ended_at),
            "cancel_initiated_at": rfc3339(self.cancel_initiated_at), "archived_at": None,
            "results_url": f"{base_url}/v1/messages/batches/{self.id}/results" if self.status == "ended" else None,
        }


def check_batch_shape(body: Any) -> list[ApiError]:
    """The checks the API makes when a batch is created (params are checked later, per request)."""
    if not isinstance(body, dict):
        return [invalid("Request body must be a JSON object")]
    problems = [invalid(f"{key}: Extra inputs are not permitted") for key in sorted(body.keys() - {"requests"})]
    requests = body.get("requests")
    if requests is None:
        return [*problems, invalid("requests: Field required")]
    if not isinstance(requests, list) or not requests:
        return [*problems, invalid("requests: List should have at least 1 item")]
    if len(requests) > MAX_REQUESTS:
        return [*problems, invalid(f"requests: a Message Batch holds at most {MAX_REQUESTS} requests")]
    seen: set[str] = set()
    for index, request in enumerate(requests):
        where = f"requests.{index}"
        if not isinstance(request, dict):
            problems.append(invalid(f"{where}: Input should be a valid dictionary"))
            continue
        problems += [invalid(f"{where}.{key}: Extra inputs are not permitted")
                     for key in sorted(request.keys() - {"custom_id", "params"})]
        custom_id = request.get("custom_id")
        if not isinstance(custom_id, str) or not CUSTOM_ID.match(custom_id):
            problems.append(invalid(f"{where}.custom_id: String should match pattern '^[a-zA-Z0-9_-]{{1,64}}$'"))
        elif custom_id in seen:
            problems.append(invalid(f"requests: custom_id values must be unique within a batch; {custom_id!r} "
                                    "appears more than once"))
        seen.add(custom_id)
        if not isinstance(request.get("params"), dict):
            problems.append(invalid(f"{where}.params: Field required"))
    return problems


class BatchStore:
    """The batches the double knows, newest last; one lock, since polls and creates can overlap."""

    def __init__(self, process: Processor) -> None:
        self._process = process
        self._lock = threading.RLock()
        self._batches: dict[str, Batch] = {}
        self.polls_before_end = 0

    def get(self, batch_id: str) -> Batch:
        with self._lock:
            batch = self._batches.get(batch_id)
        if batch is None:
            raise ApiError(404, f"message_batch_id: no Message Batch {batch_id!r}")
        return batch

    def create(self, body: dict, version: str, base_url: str) -> dict:
        requests = [(request["custom_id"], request["params"]) for request in body["requests"]]
        batch = Batch(new_id("msgbatch"), requests, version, self.polls_before_end)
        with self._lock:
            self._batches[batch.id] = batch
            answer = batch.to_json(base_url)  # taken before processing: the API answers "in_progress"
            if batch.polls_left == 0:
                self._end(batch)
        return answer

    def retrieve(self, batch_id: str, base_url: str) -> dict:
        with self._lock:
            batch = self.get(batch_id)
            if batch.status == "canceling":
                self._end(batch, canceled=True)
            elif batch.status == "in_progress":
                if batch.polls_left > 0:
                    batch.polls_left -= 1
                else:
                    self._end(batch)
            return batch.to_json(base_url)

    def cancel(self, batch_id: str, base_url: str) -> dict:
        with self._lock:
            batch = self.get(batch_id)
            if batch.status == "in_progress":  # an ended batch is answered as it is: nothing left to cancel
                batch.status, batch.cancel_initiated_at = "canceling", datetime.now(UTC)
            return batch.to_json(base_url)

    def delete(self, batch_id: str) -> dict:
        with self._lock:
            batch = self.get(batch_id)
            if batch.status != "ended":
                raise invalid(f"Message Batch {batch_id} is still processing: cancel it and wait for it to end "
                              "before deleting it")
            del self._batches[batch_id]
        return {"id": batch_id, "type": "message_batch_deleted"}

    def results(self, batch_id: str) -> bytes:
        batch = self.get(batch_id)
        with self._lock:
            if batch.status != "ended":
                raise invalid(f"Message Batch {batch_id} has not ended yet (processing_status "
                              f"{batch.status!r}); results are available once it has")
            lines = list(reversed(batch.results or []))
        return b"".join(json.dumps(line).encode() + b"\n" for line in lines)

    def list(self, query: dict[str, str], base_url: str) -> dict:
        with self._lock:
            batches = list(reversed(self._batches.values()))  # newest first, as the API lists them
        try:
            limit = int(query.get("limit", 20))
        except ValueError:
            raise invalid("limit: Input should be a valid integer") from None
        if not 1 <= limit <= 1000:
            raise invalid("limit: Input should be between 1 and 1000")
        ids = [batch.id for batch in batches]
        if query.get("after_id") in ids:  # after_id: the page after (older than) that batch
            batches = batches[ids.index(query["after_id"]) + 1:]
        elif query.get("before_id") in ids:
            cut = ids.index(query["before_id"])
            batches = batches[max(cut - limit, 0):cut]
        page = batches[:limit]
        return {"data": [batch.to_json(base_url) for batch in page], "has_more": len(batches) > len(page),
                "first_id": page[0].id if page else None, "last_id": page[-1].id if page else None}

    def _end(self, batch: Batch, canceled: bool = False) -> None:
        if canceled:
            batch.results = [{"custom_id": custom_id, "result": {"type": "canceled"}}
                             for custom_id, _ in batch.requests]
        else:
            batch.results = [{"custom_id": custom_id, "result": self._process(params, batch.version)}
                             for custom_id, params in batch.requests]
        batch.status, batch.ended_at = "ended", datetime.now(UTC)
