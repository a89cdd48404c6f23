"""`[new]`: what `perfbot new` writes into a report, so a fresh scaffold runs on this runtime as it is.

    [new]
    program = '''
    # the sum of i*i for i < 1000
    sum 1000
    '''
    translation = '''
    #include <stdio.h>
    int main(void) { ... }
    '''
    prints = "14066396"         # what both print
"""
from __future__ import annotations

from typing import Annotated

from pydantic import BeforeValidator, Field

from bot.core.config.values import Section


def _snippet(value):
    if not isinstance(value, str) or not value.strip() or len(value) > 8000:
        raise ValueError("must be the program's text, e.g. a multi-line string '''...''' (at most 8000 characters)")
    if "```" in value:
        raise ValueError("must not hold ``` (it would end the report's code fence)")
    return value.strip("\n")


def _one_line(value):
    if not isinstance(value, str) or not value.strip() or len(value) > 200 or not value.isprintable():
        raise ValueError("must be one line, what both programs print")
    return value.strip()


class New(Section):
    program: Annotated[str, BeforeValidator(_snippet)] = Field(
        description="a program this runtime runs, the starting point of each new report")
    translation: Annotated[str, BeforeValidator(_snippet)] = Field(description="its 1-to-1 C translation")
    prints: Annotated[str, BeforeValidator(_one_line)] = Field(description="what both print")
