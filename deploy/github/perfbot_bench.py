"""perfbot's bench plan on a GitHub Actions runner: build base and head, time a report's two programs, write samples.

Copy to `.github/perfbot/perfbot_bench.py`; `.github/workflows/perfbot-bench.yml` runs it with the plan perfbot
dispatched in the environment (PERFBOT_PLAN, JSON). The plan is the one bot/services/bench/verify.py follows: a
git worktree per commit, built once (the build's {checkout} {sha} {script} filled in; the default branch's
build script comes in the plan, since the commits measured may predate it); the report's program and C
translation written into a fresh folder outside the checkout, never through a link; the translation
compiled; one warm-up run of each must print the same result ("mismatch" otherwise); then the two alternate
for `samples` pairs (or until `budget_seconds`). Every run is an argument list, never a shell, in its own
process group killed whole at `timeout_seconds`, timed here. perfbot decides; this script only measures.
Python 3.8+, standard library only.
"""
from __future__ import annotations

import json
import os
import platform
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

SHA = re.compile(r"[0-9a-f]{40}")
SLUG = re.compile(r"perf_[a-z0-9_]{1,80}")
PLACEHOLDERS = ("file", "threads", "out")
SCRIPT_NAME = re.compile(r"[A-Za-z0-9_.-]{1,100}")


class PlanError(Exception):
    """The plan, the report or the project is at fault: written to the samples file, not raised to Actions."""

    def __init__(self, message, verdict="error"):
        super().__init__(message)
        self.verdict = verdict


def load_plan(text):
    plan = json.loads(text)
    for key in ("head", "base"):
        if plan.get(key) is not None and not SHA.fullmatch(str(plan[key])):
            raise PlanError(f"plan: {key} is not a 40-hex commit")
    if not SLUG.fullmatch(str(plan.get("slug"))):
        raise PlanError("plan: slug is not a report slug")
    for key in ("language", "c_compile", "c_run") + (("build",) if plan.get("build") else ()):
        value = plan.get(key)
        if not isinstance(value, list) or not value or not all(isinstance(a, str) and a for a in value):
            raise PlanError(f"plan: {key} must be a list of arguments")
    script = plan.get("build_script")
    if script is not None and not (isinstance(script, dict) and SCRIPT_NAME.fullmatch(str(script.get("name")))
                                   and script["name"] not in (".", "..") and isinstance(script.get("text"), str)):
        raise PlanError("plan: build_script must be {\"name\": a file name, \"text\": its content}")
    for key in ("samples", "timeout_seconds", "budget_seconds", "threads"):
        if not isinstance(plan.get(key), int) or plan[key] < 1:
            raise PlanError(f"plan: {key} must be a positive whole number")
    return plan


def fill(template, **values):
    out = []
    for arg in template:
        for key, value in values.items():
            arg = arg.replace("{" + key + "}", value)
        out.append(arg)
    return out


def from_root(argv, workspace):
    return [os.path.join(workspace, arg[2:]) if arg.startswith("./") else arg for arg in argv]


def run(argv, cwd, timeout, memory_mb):
    """(returncode, stdout, stderr, seconds, timed_out): the program alone, its whole group killed at the timeout."""
    def limits():
        if sys.platform.startswith("linux") and memory_mb:
            import resource
            size = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (size, size))
    start = time.perf_counter()
    try:
        process = subprocess.Popen(argv, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                   stdin=subprocess.DEVNULL, start_new_session=True, preexec_fn=limits)
    except OSError as exc:
        return 127, "", str(exc), 0.0, False
    try:
        out, err = process.communicate(timeout=timeout)
        return process.returncode, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), \
            time.perf_counter() - start, False
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)
        out, err = process.communicate()
        return -9, out.decode("utf-8", "replace"), err.decode("utf-8", "replace"), time.perf_counter() - start, True


BUILT = set()  # the commits built in this job's fresh folder: never a mark in the checkout, which is the commit's


def prepare(sha, root, plan):
    """A worktree of `sha`, built once (a second side at the same commit reuses it)."""
    workspace = os.path.join(root, sha)
    if workspace in BUILT:
        return workspace
    known = subprocess.run(["git", "cat-file", "-e", sha + "^{commit}"], stderr=subprocess.DEVNULL)
    if known.returncode != 0:  # a head no branch of the clone carries (a pull request's): fetch it by sha
        subprocess.run(["git", "fetch", "--quiet", "origin", sha], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    git = subprocess.run(["git", "worktree", "add", "--detach", "--force", workspace, sha],
                         capture_output=True)
    if git.returncode != 0:
        why = git.stderr.decode("utf-8", "replace")[-300:]
        raise PlanError(f"cannot check out {sha[:12]}: {why}")
    if plan.get("build"):
        # {checkout} {sha} {script}: the build script came in the plan (from the default branch), and is kept
        # outside the checkout, which may be older than it.
        build = fill(plan["build"], checkout=workspace, sha=sha, **({"script": install_script(root, plan)}
                                                                     if plan.get("build_script") else {}))
        code, out, err, _, timed_out = run(build, workspace, plan.get("build_timeout", 1800), 0)
        if code != 0 or timed_out:
            why = "timed out" if timed_out else f"exited {code}"
            command = " ".join(plan["build"])
            raise PlanError(f"build {command} at {sha[:12]} {why}:\n{(err or out)[-600:]}")
    BUILT.add(workspace)
    return workspace


def put(path, text, mode=0o644):
    """A new file in a folder this script made, never through a link (O_EXCL|O_NOFOLLOW)."""
    handle = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, mode)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(text)


def install_script(root, plan):
    folder = os.path.join(root, "scripts")
    path = os.path.join(folder, plan["build_script"]["name"])
    if not os.path.exists(path):
        os.makedirs(folder, exist_ok=True)
        put(path, plan["build_script"]["text"], 0o755)
    return path


def measure(label, sha, root, plan):
    workspace = prepare(sha, root, plan)
    # A fresh folder outside the checkout: a committed .perfbot-run (or a link in it) is never used.
    folder = tempfile.mkdtemp(prefix=f"run-{sha[:12]}-{plan['slug']}-", dir=root)
    for name, key in (("program.bend", "program"), ("translation.c", "translation")):
        put(os.path.join(folder, name), plan[key])
    program, source, binary = (os.path.join(folder, n) for n in ("program.bend", "translation.c", "translation"))
    timeout, memory = plan["timeout_seconds"], plan.get("memory_mb", 4096)
    code, _, err, _, _ = run(fill(plan["c_compile"], file=source, out=binary), folder, timeout, memory)
    if code != 0:
        raise PlanError(f"the C translation does not compile at {sha[:12]}: {err.strip()[-400:]}")
    par = plan.get("track") == "par"
    argv_language = from_root(fill(plan["language"], file=program, threads=str(plan["threads"])), workspace)
    argv_c = fill(plan["c_run"], out=binary, file=source)
    names = ("the program", "the C translation")
    if par:  # a speedup: the program on one thread against the program on the claimed threads
        argv_c = argv_language
        argv_language = from_root(fill(plan["language"], file=program, threads="1"), workspace)
        names = ("the program on 1 thread", f"the program on {plan['threads']} threads")
    first = [run(argv, folder, timeout, memory) for argv in (argv_language, argv_c)]
    for name, (code, _out, err, _, timed_out) in zip(names, first):
        if timed_out:
            raise PlanError(f"{name} ran past the {timeout}s limit at {sha[:12]}")
        if code != 0:
            raise PlanError(f"{name} exited {code} at {sha[:12]}: {err.strip()[-300:]}")
    if first[0][1].strip() != first[1][1].strip():
        printed = [output.strip()[:80] for _, output, _, _, _ in first]
        raise PlanError(f"at {sha[:12]} {names[0]} prints {printed[0]!r} but {names[1]} prints {printed[1]!r}: "
                        "not the same computation", "mismatch")
    keys = ("one_thread_seconds", "n_threads_seconds") if par else ("language_seconds", "c_seconds")
    side = {"side": label, "sha": sha, keys[0]: [], keys[1]: [], "output": first[1][1].strip()[:200]}
    deadline = time.monotonic() + plan["budget_seconds"]
    while len(side[keys[1]]) < plan["samples"] and time.monotonic() < deadline:
        for argv, key in ((argv_language, keys[0]), (argv_c, keys[1])):
            code, _, _, seconds, timed_out = run(argv, folder, timeout, memory)
            if code != 0 or timed_out:
                raise PlanError(f"a timed run failed at {sha[:12]} (exit {code}, timed out: {timed_out})")
            side[key].append(seconds)
    return side


def main():
    out_path = os.environ.get("PERFBOT_OUT", "perfbot-samples/perfbot-samples.json")
    result = {"run": None, "host": platform.node(), "sides": [], "error": None, "verdict": None}
    root = tempfile.mkdtemp(prefix="perfbot-", dir=os.environ.get("RUNNER_TEMP"))
    try:
        plan = load_plan(os.environ["PERFBOT_PLAN"])
        result["run"] = plan.get("run")
        sides = ([("base", plan["base"])] if plan.get("base") else []) + [("head", plan["head"])]
        for label, sha in sides:
            result["sides"].append(measure(label, sha, root, plan))
    except PlanError as exc:
        result["error"], result["verdict"] = str(exc), exc.verdict
    except (KeyError, ValueError) as exc:
        result["error"], result["verdict"] = f"plan: unreadable ({exc.__class__.__name__})", "error"
    finally:  # a self-hosted runner keeps its checkout: leave no worktrees behind in it
        shutil.rmtree(root, ignore_errors=True)
        subprocess.run(["git", "worktree", "prune"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    os.makedirs(os.path.dirname(out_path) or ".", exist_ok=True)
    with open(out_path, "w", encoding="utf-8") as handle:
        json.dump(result, handle)
    outcome = result["error"] or "samples written to " + out_path
    print(f"perfbot bench run {result['run']}: {outcome}")
    return 0  # a report's failure is perfbot's to judge from the samples file; only a crash fails the job


if __name__ == "__main__":
    sys.exit(main())
