"""Which record a slug means while sync applies commits, and what content sync compares against."""
from __future__ import annotations

from bot.adapters.store.models import Record
from bot.adapters.store.repository import RecordRepository

LIVE = "open"
# A record a person closed by override still has its file in git: sync treats it as live but leaves it closed.
LIVE_STATES = frozenset({"open", "closed"})
FIXED = "fixed"  # its fix merged with a passing verdict; not live, yet its file may still be edited or moved
REGRESSED = "regressed"  # fixed, then its guard found the claim again: waiting for a new fix, wherever its file is
# Kept through edits and moves: the file leaves devs/issues through perfbot's move PR, the record stays.
KEPT_STATES = frozenset({FIXED, REGRESSED})


class Identities:
    """Normal syncs read identity and state from the store; a `--history` replay keeps its own.

    A replay walks commits from the root over a store that may already hold the head state, so it
    must judge "is this content new?" and "which record is perf_a?" as of the commit being replayed,
    not as of the store's present. It remembers record ids, not ORM objects, because a long replay
    spans several transactions.
    """

    def __init__(self, replay: bool) -> None:
        self.replay = replay
        self._slug_to_id: dict[str, int] = {}
        self._state: dict[int, tuple[str | None, bool]] = {}

    def lookup(self, records: RecordRepository, slug: str) -> Record | None:
        if not self.replay:
            return records.find_current(slug)
        if slug in self._slug_to_id:
            return records.session.get(Record, self._slug_to_id[slug])
        record = records.find_current(slug) or records.find(slug)
        if record is not None and record.id in self._state:
            return None  # the store's record for this name is a different report in this replay
        return record

    def content_hash(self, record: Record) -> str | None:
        return self._state.get(record.id, (None, False))[0] if self.replay else record.content_hash

    def is_live(self, record: Record) -> bool:
        return self._state.get(record.id, (None, False))[1] if self.replay else record.state in LIVE_STATES

    def remember(self, records: RecordRepository, record: Record, slug: str, content_hash: str | None, live: bool,
                 old_slug: str | None = None) -> None:
        if not self.replay:
            return
        records.ensure_id(record)  # a replay remembers ids, which a new row gets when flushed
        if old_slug and self._slug_to_id.get(old_slug) == record.id:
            del self._slug_to_id[old_slug]
        self._slug_to_id[slug] = record.id
        self._state[record.id] = (content_hash, live)
