"""The digest's package keeps its promises: every module of it stands in a layer of the import-linter contracts
(a module left out would be checked by none), its pure modules are held to the core's rules, and its templates
shadow none of bot/templates/ and ship in the wheel."""
from __future__ import annotations

import importlib
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import bot
import bot.digest
from bot.adapters.templates import FEATURE_PACKAGES, environment

PROJECT_ROOT = Path(bot.__file__).parent.parent
PACKAGE = Path(bot.digest.__file__).parent


def pyproject() -> dict:
    return tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def contracts() -> list[dict]:
    return pyproject()["tool"]["importlinter"]["contracts"]


def feature_templates(package: str) -> tuple[Path, set[Path]]:
    folder = Path(importlib.import_module(package).__file__ or "").parent / "templates"
    return folder, {p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def layers() -> list[set[str]]:
    found, = (c["layers"] for c in contracts() if c["type"] == "layers")
    return [{name.strip() for name in re.split(r"[|:]", layer)} for layer in found]


def test_every_digest_module_stands_in_a_layer():
    modules = {f"bot.digest.{path.stem}" for path in PACKAGE.glob("*.py") if path.stem != "__init__"}
    layered = set().union(*layers())
    assert modules and modules <= layered, modules - layered


def test_the_pure_digest_modules_are_held_to_the_cores_rules():
    beside_core = layers()[-1] - {"bot.core"}
    assert beside_core == {"bot.digest.model", "bot.digest.scaling"}
    pure, = (c for c in contracts() if c["type"] == "forbidden" and "bot.core" in c["source_modules"]
             and "sqlalchemy" in c["forbidden_modules"])
    assert beside_core <= set(pure["source_modules"])


def test_a_feature_template_shadows_no_shared_one():
    """The loader takes the first folder that holds a name: the same name in two folders would hide one."""
    shared_folder = PROJECT_ROOT / "bot" / "templates"
    shared = {p.relative_to(shared_folder) for p in shared_folder.rglob("*") if p.is_file()}
    for package in FEATURE_PACKAGES:
        _, own = feature_templates(package)
        assert own and not own & shared, own & shared
    assert Path(environment().get_template("digest.md.j2").filename or "").parent == PACKAGE / "templates"


def test_every_feature_template_ships_in_the_wheel():
    """setuptools takes package data only where pyproject.toml says: a template left out renders in a checkout
    and is missing once installed (tests/service/test_deploy.py builds the wheel itself)."""
    shipped = pyproject()["tool"]["setuptools"]["package-data"]
    for package in FEATURE_PACKAGES:
        _, own = feature_templates(package)
        globs = shipped.get(package, [])
        assert own and all(any(fnmatch(str(Path("templates") / name), g) for g in globs) for name in own), globs
