"""Every feature package (adapters/templates.FEATURE_PACKAGES) keeps the promises ARCHITECTURE.md makes: each of
its modules stands beside one layer of the import-linter contracts and is named by the contracts of that layer (a
module left out would be checked by none), the core and the handlers import no feature, a feature is reached only
through the entries its `protected` contract names, and its templates shadow no other and ship in the wheel."""
from __future__ import annotations

import importlib
import re
import tomllib
from fnmatch import fnmatch
from pathlib import Path

import pytest

import bot
from bot.adapters.templates import FEATURE_PACKAGES, environment, templated

PROJECT_ROOT = Path(bot.__file__).parent.parent


def pyproject() -> dict:
    return tomllib.loads((PROJECT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))


def contracts() -> list[dict]:
    return pyproject()["tool"]["importlinter"]["contracts"]


def forbidden(source: str, *, forbids: str) -> dict:
    """The one forbidden contract whose sources include `source` and which forbids `forbids`."""
    found, = (c for c in contracts() if c["type"] == "forbidden" and source in c["source_modules"]
              and forbids in c["forbidden_modules"])
    return found


def folder_of(package: str) -> Path:
    return Path(importlib.import_module(package).__file__ or "").parent


def modules_of(package: str) -> set[str]:
    return {f"{package}.{path.stem}" for path in folder_of(package).glob("*.py") if path.stem != "__init__"}


def templates_of(package: str) -> tuple[Path, set[Path]]:
    folder = folder_of(package) / "templates"
    return folder, {p.relative_to(folder) for p in folder.rglob("*") if p.is_file() and "__pycache__" not in p.parts}


def layers() -> list[set[str]]:
    found, = (c["layers"] for c in contracts() if c["type"] == "layers")
    return [{name.strip() for name in re.split(r"[|:]", layer)} for layer in found]


def beside(layer: str) -> set[str]:
    found, = (names for names in layers() if layer in names)
    return found


def test_every_feature_package_in_the_contracts_is_listed():
    """A package the contracts place module by module but FEATURE_PACKAGES forgot would escape every test below."""
    placed = {name.rpartition(".")[0] for names in layers() for name in names if name.count(".") >= 2}
    assert placed == set(FEATURE_PACKAGES)


@pytest.mark.parametrize("package", FEATURE_PACKAGES)
def test_every_module_of_a_feature_stands_beside_one_layer(package):
    modules = modules_of(package)
    assert modules
    for module in modules:
        assert sum(module in names for names in layers()) == 1, f"{module} stands beside no layer, or two"


@pytest.mark.parametrize("package", FEATURE_PACKAGES)
def test_every_module_of_a_feature_keeps_its_layers_rules(package):
    modules = modules_of(package)
    pure = forbidden("bot.core", forbids="sqlalchemy")
    pure_modules = modules & beside("bot.core")
    assert pure_modules <= set(pure["source_modules"])  # no I/O, nothing above the core
    assert modules - pure_modules <= set(pure["forbidden_modules"])  # the pure ones never reach the rest
    services = forbidden("bot.services", forbids="sqlalchemy")
    assert modules & beside("bot.services") <= set(services["source_modules"])


@pytest.mark.parametrize("package", FEATURE_PACKAGES)
def test_a_feature_is_reached_only_through_its_entries(package):
    assert package in forbidden("bot.core", forbids=package)["forbidden_modules"]  # the core serves features
    assert package in forbidden("handlers", forbids=package)["forbidden_modules"]  # handlers call the use cases
    protected, = (c for c in contracts() if c["type"] == "protected" and c["protected_modules"] == [package])
    assert package in protected["allowed_importers"]


def test_a_feature_template_shadows_no_other():
    """The loader takes the first folder that holds a name: the same name in two folders would hide one."""
    shared_folder = PROJECT_ROOT / "bot" / "templates"
    seen = {p.relative_to(shared_folder) for p in shared_folder.rglob("*") if p.is_file()}
    for package in templated():
        folder, own = templates_of(package)
        assert own and not own & seen, own & seen
        seen |= own
        for name in own - {n for n in own if n.parts[0] == "web"}:  # web/ pages are Flask's, through a blueprint
            assert Path(environment().get_template(name.as_posix()).filename or "").parent == folder


@pytest.mark.parametrize("package", FEATURE_PACKAGES)
def test_every_feature_template_ships_in_the_wheel(package):
    """setuptools takes package data only where pyproject.toml says: a template left out renders in a checkout
    and is missing once installed (tests/service/test_deploy.py builds the wheel itself)."""
    globs = pyproject()["tool"]["setuptools"]["package-data"].get(package, [])
    _, own = templates_of(package)
    assert (package in templated()) == bool(own)
    assert all(any(fnmatch(str(Path("templates") / name), g) for g in globs) for name in own), globs
