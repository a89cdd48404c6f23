"""A pushed report that overlaps an old one: verdict, labels, comments on both issues, and a merge PR."""
from __future__ import annotations

import pytest

from bot.adapters.clones import Clones
from bot.adapters.github.client import GitHubClients
from bot.adapters.github.issues import GitHubIssues
from bot.config import Settings
from bot.core.reports.records import ReadingOptions
from bot.services.usecases import BotServices, RepoSource
from tests.flows import pending_merges
from tests.gitrepo import RepoBuilder
from tests.reports import canonical_report

REPO = "team/runtime"
OLD, NEW = "devs/issues/perf_u24_mul_slow.md", "devs/issues/perf_u24_hash_slow.md"
U24 = "def mix(x):\n  x = x ^ (x >> 12)\n  x = x * 2935 + 11\n  return x ^ (x >> 7)\n"


def u24(slug: str, title: str) -> str:
    text = canonical_report(slug, title=title, ratio=120,
                            root_cause="Every u24 operation is an OPE node: `interact_opx` boxes each value.")
    start = text.index("```bend\n") + len("```bend\n")
    return text[:start] + U24 + text[text.index("\n```", start) + 1:]


@pytest.fixture
def world(github, database, tmp_path):
    github.add_repo(REPO)
    github.use_git_remotes(tmp_path / "remotes")
    remote = RepoBuilder(tmp_path / "remotes" / "team" / "runtime.git", branch="main")
    settings = Settings(instance_dir=tmp_path, database_url=database.url, github_token=github.token,
                        github_api_url=github.url, github_request_interval=0, github_write_interval=0)
    clients = GitHubClients(settings)
    clones = Clones(tmp_path / "clones", f"file://{tmp_path / 'remotes'}")
    services = BotServices(
        database, lambda name, _inst: GitHubIssues(clients.for_installation(None), name, clients.own_login),
        RepoSource(fetch=lambda name, _inst: clones.fetch(name), push=lambda name, _inst, branch: clones.push(name,
                                                                                                              branch)),
        bot_login="perfbot[bot]", own_login=clients.own_login)
    yield remote, services
    clients.close()


def issue(github, number: int):
    with github.state.lock:
        found = github.state.repo("team", "runtime").issues[number]
        return found.state, found.state_reason, sorted(label.name for label in found.labels), found.pull


def dedup_comments(github, number: int) -> list[str]:
    with github.state.lock:
        return [c.body for c in github.state.repo("team", "runtime").comments.values()
                if c.issue_number == number and c.body.startswith("<!-- perfbot:dedup")]


def test_an_overlapping_report_gets_labels_comments_and_a_merge_pull_request(world, github, database):
    remote, services = world
    remote.write(OLD, u24("perf_u24_mul_slow", "u24 multiply boxes every value")).commit("old finding")
    services.reports.sync_and_mirror(REPO, None, None)
    head = remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes every value")).commit("new finding")
    services.reports.sync_and_mirror(REPO, head, None)

    old_state, _, old_labels, _ = issue(github, 1)
    _, _, new_labels, _ = issue(github, 2)
    assert (any(label.startswith("dedup: ") for label in old_labels)
            and any(label.startswith("dedup: ") for label in new_labels)), (old_labels, new_labels)
    assert len(dedup_comments(github, 1)) == 1 and len(dedup_comments(github, 2)) == 1
    assert "#3 proposes that merge" in dedup_comments(github, 2)[0]
    *_, pull = issue(github, 3)
    assert pull.head_ref == "perfbot/merge-perf_u24_hash_slow" and pull.base_ref == "main"
    assert pending_merges(database) == [(3, "perf_u24_hash_slow", "perf_u24_mul_slow", "offline")]

    branch = remote.repo.commit("perfbot/merge-perf_u24_hash_slow")
    assert remote.repo.heads.main.commit.hexsha == head  # the default branch is never written
    paths = {item.path for item in branch.tree.traverse()}
    assert OLD not in paths and NEW in paths
    assert "supersedes: [perf_u24_mul_slow]" in (branch.tree / NEW).data_stream.read().decode()

    writes = len(github.writes())
    services.reports.sync_and_mirror(REPO, head, None)  # a redelivery or the hourly reconcile
    assert len(github.writes()) == writes

    remote.repo.git.merge("--no-ff", "-m", "Merge the dedup PR", "perfbot/merge-perf_u24_hash_slow")
    services.reports.sync_and_mirror(REPO, remote.repo.head.commit.hexsha, None)
    old_state, old_reason, old_labels, _ = issue(github, 1)
    assert (old_state, old_reason) == ("closed", "duplicate") and "state: merged" in old_labels
    assert not any(label.startswith("dedup: ") for label in issue(github, 2)[2])


def test_a_not_a_duplicate_label_overrules_the_pair_for_good(world, github):
    import copy

    import handlers
    from bot.services.worker import Event
    from tests.npm_fixtures import webhook_examples

    remote, services = world
    remote.write(OLD, u24("perf_u24_mul_slow", "u24 multiply boxes every value")).commit("old finding")
    services.reports.sync_and_mirror(REPO, None, None)
    head = remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes every value")).commit("new finding")
    services.reports.sync_and_mirror(REPO, head, None)
    labeled = copy.deepcopy(next(p for p in webhook_examples("issues") if p["action"] == "labeled"))
    labeled["issue"]["number"] = 2
    labeled["label"]["name"] = "not a duplicate"
    labeled["repository"]["full_name"] = REPO
    assert handlers.dispatch(Event("issues", "labeled", "d-label", labeled, REPO, None), services) == []
    assert not any(label.startswith("dedup: ") for label in issue(github, 1)[2] + issue(github, 2)[2])
    edited = remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes every value!")).commit("reworded")
    services.reports.sync_and_mirror(REPO, edited, None)  # the pair is reviewed again but stays overruled
    assert not any(label.startswith("dedup: ") for label in issue(github, 2)[2])


def test_the_push_path_updates_a_long_lived_index_instead_of_rebuilding_it(world, github, database):
    from bot.adapters.store.mirror_queries import live_reports
    from bot.core.dedup.retrieval import RetrievalIndex
    from bot.core.dedup.similarity import features
    from bot.services.dedup.live_index import LiveIndexes

    remote, services = world
    other = "devs/issues/perf_tail_call_frames.md"
    remote.write(OLD, u24("perf_u24_mul_slow", "u24 multiply boxes every value"))
    remote.write(other, canonical_report("perf_tail_call_frames", title="tail calls keep their frames"))
    services.reports.sync_and_mirror(REPO, remote.commit("two findings"), None)
    services.reports.sync_and_mirror(REPO, remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes every value"))
                                     .commit("new finding"), None)
    services.reports.sync_and_mirror(REPO, remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes all values"))
                                     .commit("reworded"), None)
    services.reports.sync_and_mirror(REPO, remote.delete(other).commit("tail calls were a measuring error"), None)

    steps = [(s.built, s.added, s.replaced, s.removed, s.parsed) for s in services.reports.indexes.steps(REPO)]
    assert steps == [(2, 0, 0, 0, 2), (0, 1, 0, 0, 1), (0, 0, 1, 0, 1), (0, 0, 0, 1, 0)]
    # A new process builds its index from the stored features: nothing parsed or lexed again.
    index, records, step = LiveIndexes().current(database, REPO)
    assert (step.built, step.parsed) == (2, 0)
    live = live_reports(database, REPO)
    assert sorted(records) == sorted(r.slug for r in live) == ["perf_u24_hash_slow", "perf_u24_mul_slow"]
    fresh = RetrievalIndex([features(r) for r in live])
    for report in live:
        assert index.candidates(features(report)) == fresh.candidates(features(report))
    assert index.candidates(features(records["perf_u24_hash_slow"]))[0].slug == "perf_u24_mul_slow"


def test_two_new_reports_that_overlap_each_other_get_one_merge_pull_request(world, github):
    remote, services = world
    remote.write(OLD, u24("perf_u24_mul_slow", "u24 multiply boxes every value"))
    remote.write(NEW, u24("perf_u24_hash_slow", "u24 hashing boxes every value")).commit("two findings at once")
    services.reports.sync_and_mirror(REPO, None, None)
    with github.state.lock:
        pulls = [i for i in github.state.repo("team", "runtime").issues.values() if i.pull]
    assert len(pulls) == 1 and pulls[0].pull.head_ref.startswith("perfbot/merge-perf_u24_")


@pytest.mark.parametrize("declared", [True, False])
def test_reports_fenced_with_the_runtimes_own_tag_are_compared_and_merged_as_programs_once_declared(
        world, github, declared):
    remote, services = world
    if declared:
        remote.write(".perfbot.toml", '[run]\nfence = ["tally"]\n')
    tally = lambda slug, title: u24(slug, title).replace("```bend", "```tally")  # noqa: E731
    remote.write(OLD, tally("perf_u24_mul_slow", "u24 multiply boxes every value"))
    remote.write(NEW, tally("perf_u24_hash_slow", "u24 hashing boxes every value")).commit("two ```tally findings")
    services.reports.sync_and_mirror(REPO, None, None)
    # The push path read them the configured way: asking for that reading reuses its index, any other rebuilds.
    _, records, step = services.reports.indexes.current(services.context.db, REPO,
                                                        ReadingOptions(language_tags=("tally",)))
    assert step.built == (0 if declared else 2)
    assert [b.tag for b in records["perf_u24_hash_slow"].blocks("language")] == ["tally"]
    with github.state.lock:
        pulls = [i for i in github.state.repo("team", "runtime").issues.values() if i.pull]
    if not declared:  # no program to merge: the merged report would not lint, so a person merges by hand
        assert pulls == []
        return
    assert len(pulls) == 1
    merged = remote.repo.git.show(f"{pulls[0].pull.head_ref}:{NEW}")
    assert merged.count("```tally\n" + U24) == 1 and "```bend" not in merged
