"""What each provider's chat-completions API accepts, per model family, as data: the request of ``medhorizon_openai``.

One :class:`RequestRule` per family: which field limits the reply's tokens,
whether the request may carry a temperature, the reasoning-effort field and its
documented values, and the thinking switch. :func:`request_fields` turns a
rule, the task's generation settings and the user's model args into the
fields of one request. The model args override the rule: ``reasoning_effort=high``,
``max_completion_tokens=N`` or ``max_tokens=N`` (that key, that many tokens),
``thinking=on|off``. A value the rule's provider does not document (an effort
it does not list, a switch it does not have) is refused before any request is
sent, naming the allowed values and the page that documents them.

Families are matched on the whole model id (case-insensitive, first match
wins; ``Qwen/Qwen3-VL-8B-Instruct`` is a checkpoint, not a DashScope model);
any other model (a vLLM or SGLang server, a router's ``vendor/model`` id, an
unknown provider) gets
:data:`GENERIC`, the OpenAI-compatible request lmms-eval's own wrapper sends.
Each rule cites the provider page it follows; a provider that changes its API
answers with a 4xx, which stops the run at the first request with the
provider's message (``medhorizon_openai``), never a silent score. (408, 409 and
429 are retried, and a 400 that refuses one item for its content is that item's
``refused``: :mod:`medhorizon_tasks.core.retry`.)

Framework-free: nothing here imports lmms-eval or an HTTP client.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from fnmatch import fnmatchcase

__all__ = ["RequestRule", "RULES", "GENERIC", "rule_for", "request_fields", "TOKEN_KEYS", "THINKING_VALUES"]

TOKEN_KEYS = ("max_completion_tokens", "max_tokens")
THINKING_VALUES = {"on": True, "true": True, "1": True, "off": False, "false": False, "0": False}


@dataclass(frozen=True)
class RequestRule:
    family: str                       # as messages and the README name it
    models: tuple[str, ...]           # model ids it covers (shell patterns, lower case)
    token_key: str                    # the field that limits the reply's tokens (thinking included)
    temperature: bool                 # whether the request carries the task's temperature
    effort_key: str | None = None     # the reasoning-effort field
    efforts: tuple[str, ...] = ()     # its documented values (empty with a key: not checked)
    thinking_key: str | None = None   # the thinking switch (a top-level field of the request body)
    thinking: tuple = ()              # its (on, off) values
    reasoning: bool = False           # thinks before answering unless told otherwise: the budget counts the thinking
    source: str = ""                  # the provider's page that documents these parameters

    def matches(self, model: str) -> bool:
        # an id with a "/" is a checkpoint on a local server ("Qwen/Qwen3-VL-8B-Instruct") or a router's path,
        # never a provider's own model id
        name = model.strip().lower()
        return "/" not in name and any(fnmatchcase(name, pattern) for pattern in self.models)


_OPENAI_REASONING = ("https://platform.openai.com/docs/api-reference/chat/create (max_tokens 'is not compatible "
                     "with o-series models', max_completion_tokens counts 'visible output tokens and reasoning "
                     "tokens'); https://platform.openai.com/docs/guides/reasoning")
_OPENAI_EFFORT = ("https://learn.microsoft.com/en-us/javascript/api/@azure/ai-projects/reasoningeffort (OpenAI's "
                  "reasoning_effort: gpt-5.1 takes none/low/medium/high, models before it do not take none, xhigh "
                  "comes after gpt-5.1-codex-max)")

RULES: tuple[RequestRule, ...] = (
    # OpenAI reasoning models: no sampling parameters; the token limit counts the reasoning too
    RequestRule("OpenAI GPT-5.2 and later", ("gpt-5.[2-9]", "gpt-5.[2-9]-*"), "max_completion_tokens",
                False, "reasoning_effort", ("none", "low", "medium", "high", "xhigh"), reasoning=True,
                source=f"{_OPENAI_REASONING}; {_OPENAI_EFFORT}"),
    RequestRule("OpenAI GPT-5.1", ("gpt-5.1", "gpt-5.1-*"), "max_completion_tokens", False, "reasoning_effort",
                ("none", "low", "medium", "high"), reasoning=True, source=f"{_OPENAI_REASONING}; {_OPENAI_EFFORT}"),
    RequestRule("OpenAI GPT-5", ("gpt-5", "gpt-5-*"), "max_completion_tokens", False, "reasoning_effort",
                ("minimal", "low", "medium", "high"), reasoning=True,
                source=f"{_OPENAI_REASONING}; https://community.openai.com/t/request-for-compatibility-matrix-"
                       "reasoning-effort-sampling-parameters-across-gpt-5-series/1371738"),
    RequestRule("OpenAI o-series", ("o1", "o1-*", "o3", "o3-*", "o4-*"), "max_completion_tokens", False,
                "reasoning_effort", ("low", "medium", "high"), reasoning=True,
                source=f"{_OPENAI_REASONING}; https://docs.rs/openai-tools/3.0.0/openai_tools/responses/request/"
                       "enum.ReasoningEffort.html (o1, o3, o4: low, medium, high)"),
    # OpenAI chat models: max_tokens still accepted (deprecated), temperature allowed, no reasoning
    RequestRule("OpenAI GPT-4.x", ("gpt-4*", "gpt-3.5*", "chatgpt-4o*"), "max_tokens", True,
                source="https://platform.openai.com/docs/api-reference/chat/create"),
    # Gemini through its OpenAI-compatible endpoint: reasoning_effort maps onto its thinking level / budget
    RequestRule("Gemini 3 (OpenAI-compatible endpoint)", ("gemini-3*",), "max_tokens", False, "reasoning_effort",
                ("low", "medium", "high"), reasoning=True,
                source="https://ai.google.dev/gemini-api/docs/openai (reasoning_effort -> thinking level); "
                       "https://docs.cloud.google.com/vertex-ai/generative-ai/docs/start/gemini-3-prompting-guide "
                       "('keeping the temperature parameter at its default value of 1.0'; below it 'may lead to "
                       "unexpected behavior, looping, or degraded performance'): not sent"),
    RequestRule("Gemini 2.5 (OpenAI-compatible endpoint)", ("gemini-2.5*",), "max_tokens", True, "reasoning_effort",
                ("none", "low", "medium", "high"), reasoning=True,
                source="https://ai.google.dev/gemini-api/docs/openai (low / medium / high: 1K / 8K / 24K thinking "
                       "tokens; none turns thinking off where the model allows it)"),
    # Alibaba Cloud Model Studio (DashScope), compatible mode: a hybrid-thinking switch outside the OpenAI schema
    RequestRule("Qwen on DashScope (compatible mode)", ("qwen*", "qwq*"), "max_completion_tokens", True,
                thinking_key="enable_thinking", thinking=(True, False), reasoning=True,
                source="https://www.alibabacloud.com/help/en/model-studio/deep-thinking (enable_thinking, passed in "
                       "the request body); https://www.alibabacloud.com/en/notice/model_studio_notice_of_changes_to_"
                       "certain_model_fields_724 (max_tokens replaced by max_completion_tokens)"),
    # Moonshot (Kimi): sampling parameters fixed by the platform, thinking on unless switched off
    RequestRule("Moonshot Kimi K2", ("kimi-k2*",), "max_completion_tokens", False, thinking_key="thinking",
                thinking=({"type": "enabled"}, {"type": "disabled"}), reasoning=True,
                source="https://platform.kimi.ai/docs/api/models-overview (kimi-k2.5: temperature 'Cannot be "
                       "modified'; thinking {'type': 'enabled' | 'disabled'}); https://platform.kimi.ai/docs/api/chat "
                       "(max_tokens 'Deprecated, please refer to max_completion_tokens')"),
)

GENERIC = RequestRule("OpenAI-compatible server", ("*",), "max_tokens", True, "reasoning_effort",
                      source="lmms-eval's openai wrapper (max_tokens, temperature): vLLM, SGLang and other servers")


def rule_for(model: str) -> RequestRule:
    """The request rule of a model id (:data:`GENERIC` when no family matches)."""
    return next((r for r in RULES if r.matches(model)), GENERIC)


def _token_override(overrides: Mapping[str, object]) -> tuple[str, int] | None:
    given = [k for k in TOKEN_KEYS if overrides.get(k) not in (None, "")]
    if len(given) > 1:
        raise ValueError("give one token limit, max_completion_tokens or max_tokens, not both")
    if not given:
        return None
    key = given[0]
    try:
        value = int(overrides[key])
    except (TypeError, ValueError):
        value = 0
    if value < 1:
        raise ValueError(f"model arg {key}: expected a positive number of tokens, got {overrides[key]!r}")
    return key, value


def _effort(rule: RequestRule, model: str, value) -> dict:
    if value in (None, ""):
        return {}
    effort = str(value).strip().lower()
    if rule.effort_key is None:
        raise ValueError(f"model arg reasoning_effort: {model} ({rule.family}) takes no reasoning effort "
                         f"(see {rule.source})")
    if rule.efforts and effort not in rule.efforts:
        raise ValueError(f"model arg reasoning_effort: {model} ({rule.family}) takes {', '.join(rule.efforts)}, "
                         f"not {value!r} (see {rule.source})")
    return {rule.effort_key: effort}


def _thinking(rule: RequestRule, model: str, value) -> dict:
    if value in (None, ""):
        return {}
    switch = THINKING_VALUES.get(str(value).strip().lower())
    if switch is None:
        raise ValueError(f"model arg thinking: expected on or off, got {value!r}")
    if rule.thinking_key is None:
        raise ValueError(f"model arg thinking: {model} ({rule.family}) has no thinking switch"
                         + (f"; use reasoning_effort ({', '.join(rule.efforts)})" if rule.efforts else "")
                         + f" (see {rule.source})")
    return {rule.thinking_key: rule.thinking[0 if switch else 1]}


def request_fields(model: str, max_new_tokens: int, temperature=0, overrides: Mapping[str, object] | None = None,
                   rule: RequestRule | None = None) -> dict:
    """The generation fields of one chat-completions request for ``model``: the token limit (the task's
    ``max_new_tokens`` under the rule's key, or the user's ``max_completion_tokens`` / ``max_tokens``),
    ``temperature`` where the rule allows one, and the reasoning effort and thinking switch the user asked
    for (``overrides``: the model args). ValueError, naming the field and the allowed values, for a value the
    provider does not take."""
    rule = rule or rule_for(model)
    overrides = overrides or {}
    token = _token_override(overrides) or (rule.token_key, int(max_new_tokens))
    fields: dict = {token[0]: token[1]}
    if rule.temperature and temperature is not None:
        fields["temperature"] = temperature
    fields.update(_effort(rule, model, overrides.get("reasoning_effort")))
    fields.update(_thinking(rule, model, overrides.get("thinking")))
    return fields
