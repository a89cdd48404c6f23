"""mkdocs hook: the pages generated from the code are written at build time, so the site cannot show a key
or an option the code no longer has. A page asks for one with a line `<!-- generated: NAME -->`."""
from __future__ import annotations

import re


def _config_reference() -> str:
    from bot.core.config.reference import reference_markdown
    return reference_markdown()


def _commands() -> str:
    from bot.cli.reference import commands_markdown
    return commands_markdown()


GENERATED = {"config-reference": _config_reference, "commands": _commands}


def on_page_markdown(markdown: str, page, config, files) -> str:
    for name, make in GENERATED.items():
        marker = f"<!-- generated: {name} -->"
        if marker in markdown:
            markdown = markdown.replace(marker, make())
    return markdown


def on_page_content(html: str, page, config, files) -> str:
    """A table cell's code writes `|` as `\\|` so GitHub's tables keep it in its cell (docs/*.md are read on
    GitHub too); Python-Markdown keeps the backslash inside code, so it goes here."""
    return re.sub(r"<td[^>]*>.*?</td>", lambda cell: cell.group(0).replace("\\|", "|"), html, flags=re.S)
