"""The issue tracker of local mode: issues and comments kept as files in the instance folder, no network.

A newcomer running perfbot without a GitHub account sees what perfbot would post: each issue is a
markdown file (`<number>.md`, its comments appended) beside the JSON state the mirror reads back; the
campaign dashboard is also kept as `dashboard.md`.
"""
from __future__ import annotations

import json
import os
import re
import threading
from pathlib import Path

from bot.core.lead.dashboard import MARKER as DASHBOARD_MARKER

_LOCK = threading.Lock()


def folder_for(instance_dir: Path, full_name: str) -> Path:
    return instance_dir / "local-github" / (re.sub(r"[^A-Za-z0-9_.-]+", "_", full_name).strip("_") or "repo")


class FileIssues:
    """Same methods as GitHubIssues, backed by `issues.json` written atomically."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.state_file = folder / "issues.json"

    def _load(self) -> dict:
        try:
            return json.loads(self.state_file.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {"issues": {}, "labels": [], "next_comment": 1}

    def _save(self, state: dict) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        tmp = self.state_file.with_suffix(".tmp")
        tmp.write_text(json.dumps(state, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(tmp, self.state_file)  # atomic: a crash leaves the old state or the new, never half

    def _render(self, number: int, issue: dict) -> None:
        text = [f"# #{number} {issue['title']}", "",
                f"state: {issue['state']}  labels: {', '.join(issue['labels'])}", "", issue["body"]]
        for comment in issue["comments"]:
            text += ["", "---", f"comment {comment['id']}", "", comment["body"]]
        (self.folder / f"{number}.md").write_text("\n".join(text) + "\n", encoding="utf-8")
        if issue["body"].startswith(DASHBOARD_MARKER):  # the lead's view, where a newcomer looks for it
            (self.folder / "dashboard.md").write_text("\n".join(text) + "\n", encoding="utf-8")

    def marked_issues(self, prefix: str = "<!-- perfbot:record ", label: str = "perfbot") -> dict[str, int]:
        with _LOCK:
            issues = self._load()["issues"]
        return {i["body"].split("\n", 1)[0].strip(): int(n) for n, i in issues.items()
                if i["body"].startswith(prefix) and label in i["labels"]}

    def ensure_labels(self, names: tuple[str, ...]) -> None:
        with _LOCK:
            state = self._load()
            missing = [n for n in names if n not in state["labels"]]
            if missing:
                state["labels"] += missing
                self._save(state)

    def create_issue(self, title: str, body: str, labels: tuple[str, ...]) -> int:
        with _LOCK:
            state = self._load()
            number = _next_number(state)
            issue = {"title": title, "body": body, "labels": list(labels), "state": "open", "state_reason": None,
                     "comments": []}
            state["issues"][str(number)] = issue
            self._save(state)
            self._render(number, issue)
            return number

    def update_issue(self, number: int, *, title: str, body: str, labels: tuple[str, ...], state: str,
                     state_reason: str | None) -> None:
        with _LOCK:
            data = self._load()
            issue = data["issues"][str(number)]
            issue.update(title=title, body=body, labels=list(labels), state=state,
                         state_reason=state_reason if state == "closed" else None)
            self._save(data)
            self._render(number, issue)

    def upsert_comment(self, number: int, marker: str, body: str, comment_id: int | None) -> int:
        with _LOCK:
            data = self._load()
            issue = data["issues"][str(number)]
            comment = next((c for c in issue["comments"] if c["id"] == comment_id or c["body"].startswith(marker)),
                           None)
            if comment is None:
                comment = {"id": data["next_comment"], "body": body}
                data["next_comment"] += 1
                issue["comments"].append(comment)
            comment["body"] = body
            self._save(data)
            self._render(number, issue)
            return comment["id"]

    def open_pull(self, head: str, base: str, title: str, body: str) -> int:
        """Local mode has no pull requests: the branch is in the watched repository; this records the proposal."""
        with _LOCK:
            data = self._load()
            pulls = data.setdefault("pulls", {})
            for number, pull in pulls.items():
                if pull["head"] == head and pull["state"] == "open":
                    return int(number)
            number = _next_number(data)
            pulls[str(number)] = {"head": head, "base": base, "title": title, "body": body, "state": "open"}
            self._save(data)
            (self.folder / f"pull-{number}.md").write_text(f"# PR #{number} {title}\n\n{head} -> {base}\n\n{body}\n",
                                                           encoding="utf-8")
            return number

    def open_pulls_from(self, prefix: str) -> list[dict]:
        with _LOCK:
            pulls = self._load().get("pulls", {})
        return [{"number": int(n), "head_ref": p["head"], "head_sha": "", "title": p["title"]}
                for n, p in pulls.items() if p["state"] == "open" and p["head"].startswith(prefix)]

    def merge_pull(self, number: int, head_sha: str, message: str) -> str:
        """Local mode merges nothing itself: the proposal is marked accepted; merge the branch with git."""
        with _LOCK:
            data = self._load()
            data["pulls"][str(number)]["state"] = "accepted"
            self._save(data)
        return ""

    def set_status(self, sha: str, context: str, state: str, description: str, target_url: str | None = None) -> None:
        """Commit statuses as GitHub keeps them: the latest per (commit, context)."""
        with _LOCK:
            data = self._load()
            data.setdefault("statuses", {}).setdefault(sha, {})[context] = {"state": state, "description": description}
            self._save(data)

    def publish_check(self, sha: str, result, status_description: str) -> str:
        """Local mode has no check runs: the commit status, with the run's findings kept beside it."""
        state = "success" if result.conclusion == "success" else "failure"
        with _LOCK:
            data = self._load()
            data.setdefault("statuses", {}).setdefault(sha, {})[result.name] = {"state": state,
                                                                                 "description": status_description}
            data.setdefault("checks", {}).setdefault(sha, {})[result.name] = {
                "conclusion": result.conclusion, "title": result.title, "summary": result.summary,
                "annotations": list(result.annotations)}
            self._save(data)
        return "status"


def _next_number(state: dict) -> int:
    """Issues and pull requests share one sequence of numbers, as on GitHub."""
    return len(state["issues"]) + len(state.get("pulls", {})) + 1
