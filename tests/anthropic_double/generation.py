"""Answering a request that passed the HTTP checks: validate its body, pick the scripted answer, account
the prompt cache, render the Message. Shared by /v1/messages and the requests of a Message Batch.

`Generation` sits between `Controls` (what tests script) and `AnthropicDouble` (the HTTP server); the
double's constructor sets the configuration attributes declared here.
"""
from __future__ import annotations

from typing import Any

from .answers import Answer, render_message, script_problems
from .controls import Controls
from .errors import ApiError, invalid, new_id
from .prompt_cache import prompt_blocks
from .validate import Findings, check_request


class Generation(Controls):
    models: dict[str, int]  # allowed model -> its largest max_tokens
    min_cacheable_tokens: int
    strict_alternation: bool
    extra_fields: frozenset[str]

    def _refuse(self, error: ApiError, where: str) -> ApiError:
        self._violation(f"{where}: {error.status} {error.error_type}: {error.message}")
        return error

    def _check(self, body: Any, endpoint: str, version: str, where: str) -> None:
        findings: Findings = check_request(body, endpoint=endpoint, version=version, models=self.models,
                                           strict_alternation=self.strict_alternation, extra_fields=self.extra_fields)
        for rule in findings.house_rules:
            self._violation(f"{where}: {rule}")
        for problem in findings.problems:
            self._refuse(problem, where)
        if findings.problems:
            raise findings.problems[0]
        if findings.unsupported:
            with self._lock:
                self.unimplemented.extend(f"{where}: {item}" for item in findings.unsupported)
            raise invalid("The Anthropic double does not support: " + "; ".join(findings.unsupported))

    # -- answering -------------------------------------------------------------------------------------
    def _script_error(self, problem: str) -> ApiError:
        self._error(problem)
        return ApiError(500, "The Anthropic double cannot answer this request: " + problem,
                        headers={"x-should-retry": "false"})

    def _pick_answer(self, body: dict) -> Answer:
        if body.get("max_tokens") == 0:
            return Answer()  # pre-warms the cache and generates nothing: no scripted answer is used
        try:
            answer = self._next_answer(body)
        except Exception as error:
            raise self._script_error(f"the responder raised {error!r}") from None
        if answer is None:
            raise self._script_error("no answer is scripted (queue one with answer_with_tool/answer_with_text, "
                                     "or set double.responder)")
        return answer

    def _generate(self, body: dict, answer: Answer, service_tier: str) -> dict:
        if answer.error is not None:
            raise answer.error
        if answer.batch_outcome is not None:
            raise self._script_error(f"a {answer.batch_outcome!r} outcome only exists inside a Message Batch")
        if body.get("max_tokens"):  # a cache pre-warming request generates nothing there is to judge
            for problem in script_problems(answer, body):
                self._error(problem)
        plan = self.prompt_cache.plan(body["model"], prompt_blocks(body), self.min_cacheable_tokens)
        self.prompt_cache.commit(plan)
        return render_message(answer, body, plan.usage, service_tier=service_tier)

    def _process_batch_request(self, params: dict, version: str) -> dict:
        """One request of a batch, processed when the batch ends: its result line's `result`."""
        where = "batch request"
        try:
            self._check(params, "batch", version, where)
            answer = self._pick_answer(params)
            if answer.batch_outcome is not None:
                return {"type": answer.batch_outcome}
            return {"type": "succeeded", "message": self._generate(params, answer, "batch")}
        except ApiError as error:
            return {"type": "errored", "error": error.body(new_id("req"))}
