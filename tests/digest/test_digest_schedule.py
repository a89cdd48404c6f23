"""When a weekly digest is due: the last scheduled time at or before now, in the schedule's time zone."""
from __future__ import annotations

from datetime import UTC, datetime

import pytest

from bot.adapters.schedule import last_due
from bot.digest.model import week_of

UTC = UTC


@pytest.mark.parametrize("now, due", [
    (datetime(2026, 12, 2, 16, 0, tzinfo=UTC), datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),  # Wednesday: Monday's
    (datetime(2026, 11, 30, 8, 0, tzinfo=UTC), datetime(2026, 11, 30, 8, 0, tzinfo=UTC)),  # exactly on time
    (datetime(2026, 11, 30, 7, 59, 59, tzinfo=UTC), datetime(2026, 11, 23, 8, 0, tzinfo=UTC)),  # a second early
    # Paris leaves summer time on 2026-10-25: 09:00 is 07:00 UTC before, 08:00 UTC after.
    (datetime(2026, 10, 20, 12, 0, tzinfo=UTC), datetime(2026, 10, 19, 7, 0, tzinfo=UTC)),
    (datetime(2026, 10, 27, 12, 0, tzinfo=UTC), datetime(2026, 10, 26, 8, 0, tzinfo=UTC)),
])
def test_the_last_due_time_follows_the_schedule_in_its_time_zone(now, due):
    assert last_due("mon 09:00", "Europe/Paris", now) == due


def test_weeks_are_iso_weeks():
    assert week_of(datetime(2026, 11, 30, 8, 0, tzinfo=UTC)) == "2026-W49"
    assert week_of(datetime(2027, 1, 1, 8, 0, tzinfo=UTC)) == "2026-W53"
