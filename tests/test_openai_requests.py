"""``medhorizon_openai``'s requests against a local mock provider (tests/openai_mock.py), in this process: every
provider rule of the registry is accepted by the mock, which refuses what each provider refuses; transient errors
are retried, permanent ones stop the run, the ``timeout`` is honoured, empty and cut-off replies are truncated.
The same through the real ``medhorizon-tasks run`` is in test_openai_requests_e2e.py."""

import pytest
from PIL import Image

from medhorizon_tasks.adapters.lmms_eval.bridges.openai import OpenAICompatible, ProviderRefused
from medhorizon_tasks.benchmarks.medhorizon import model_settings as medhorizon_rows
from medhorizon_tasks.benchmarks.request_rules import GENERIC, RULES, request_fields, rule_for
from medhorizon_tasks.benchmarks.sureon import model_settings as sureon_rows
from medhorizon_tasks.core.responses import REFUSED, REQUEST_ERROR, TRUNCATED, Failure, response_failure
from medhorizon_tasks.core.retry import content_refusal
from medhorizon_tasks.core.video.planned_frames import PlannedFrames
from openai_mock import MockProvider, answer, sleep, status, trickle

CLOSED_ROWS = [s for s in (*medhorizon_rows.SETTINGS, *sureon_rows.SETTINGS) if s.adapter == "medhorizon_openai"]
TASK = {"max_new_tokens": 256, "temperature": 0, "do_sample": False}  # the task templates' generation_kwargs


def _args(model_args: str) -> dict:
    return dict(part.split("=", 1) for part in model_args.split(","))


def _bridge(mock, **args) -> OpenAICompatible:
    args = {"api_key": "test", "max_retries": 1, "retry_backoff_s": 0, **args, "base_url": mock.base_url}
    return OpenAICompatible(**args)


def _frames():
    return PlannedFrames([Image.new("RGB", (32, 24), (40 * k, 0, 0)) for k in range(2)], timestamps=[0.0, 5.0])


def _ask(bridge, gen_kwargs=TASK) -> str:
    return bridge._send(bridge.planned_payload("Question?", _frames(), dict(gen_kwargs))).text


@pytest.mark.parametrize("row", CLOSED_ROWS, ids=lambda s: s.row)
def test_every_closed_row_sends_a_request_its_provider_accepts(row):
    """The row's model args and budget, as `protocol ROW` prints them, give a request the provider takes."""
    with MockProvider(limit=2) as mock:
        args = {k: v for k, v in _args(row.model_args).items() if k != "base_url"}
        bridge = _bridge(mock, **args)
        assert _ask(bridge, {**TASK, "max_new_tokens": row.max_new_tokens or 256}) == "B"
        body = mock.bodies[0]
    rule = rule_for(args["model"])
    assert rule is not GENERIC and body[rule.token_key] == (row.max_new_tokens or 256)
    assert ("temperature" in body) == rule.temperature
    assert body.get("reasoning_effort") == args.get("reasoning_effort")
    if rule.reasoning:
        assert row.max_new_tokens == medhorizon_rows.REASONING_BUDGET, "a reasoning model needs room to answer"


@pytest.mark.parametrize("model, args, sent", [
    ("gpt-5.4", {"reasoning_effort": "xhigh"}, {"max_completion_tokens": 256, "reasoning_effort": "xhigh"}),
    ("gpt-5.1", {"reasoning_effort": "none"}, {"max_completion_tokens": 256, "reasoning_effort": "none"}),
    ("gpt-5-mini", {"reasoning_effort": "minimal"}, {"max_completion_tokens": 256, "reasoning_effort": "minimal"}),
    ("o3", {"reasoning_effort": "low"}, {"max_completion_tokens": 256, "reasoning_effort": "low"}),
    ("gpt-4o", {}, {"max_tokens": 256, "temperature": 0}),
    ("gpt-4.1-mini", {"max_completion_tokens": 99}, {"max_completion_tokens": 99, "temperature": 0}),
    ("gemini-3.1-pro-preview", {"reasoning_effort": "low"}, {"max_tokens": 256, "reasoning_effort": "low"}),
    ("gemini-2.5-flash", {"reasoning_effort": "none"}, {"max_tokens": 256, "temperature": 0,
                                                        "reasoning_effort": "none"}),
    ("qwen3.5-plus", {"thinking": "off"}, {"max_completion_tokens": 256, "temperature": 0, "enable_thinking": False}),
    ("kimi-k2.5", {"thinking": "off"}, {"max_completion_tokens": 256, "thinking": {"type": "disabled"}}),
    ("Qwen/Qwen3-VL-8B-Instruct", {}, {"max_tokens": 256, "temperature": 0}),  # a vLLM server: lmms-eval's request
])
def test_each_family_rule_and_override_reaches_the_provider(model, args, sent):
    with MockProvider(limit=1) as mock:
        assert _ask(_bridge(mock, model=model, **args)) == "B"
        body = mock.bodies[0]
    assert {k: v for k, v in body.items() if k not in ("model", "messages")} == sent
    parts = body["messages"][0]["content"]
    assert [p["type"] for p in parts] == ["text", "image_url", "text", "image_url", "text"]


def test_every_family_is_checked_against_the_mock():
    """Each rule of the registry, with each reasoning effort it lists, is a request its provider takes."""
    models = {"OpenAI GPT-5.2 and later": "gpt-5.4-mini", "OpenAI GPT-5.1": "gpt-5.1", "OpenAI GPT-5": "gpt-5",
              "OpenAI o-series": "o4-mini", "OpenAI GPT-4.x": "gpt-4o", "Gemini 3 (OpenAI-compatible endpoint)":
              "gemini-3-pro-preview", "Gemini 2.5 (OpenAI-compatible endpoint)": "gemini-2.5-pro",
              "Qwen on DashScope (compatible mode)": "qwen3.6-plus", "Moonshot Kimi K2": "kimi-k2.5"}
    assert set(models) == {r.family for r in RULES}
    with MockProvider(limit=100) as mock:
        for family, model in models.items():
            rule = rule_for(model)
            assert rule.family == family
            for effort in rule.efforts or (None,):
                for thinking in ("on", "off") if rule.thinking_key else (None,):
                    bridge = _bridge(mock, model=model, reasoning_effort=effort, thinking=thinking)
                    assert _ask(bridge) == "B", (model, effort, thinking, mock.bodies[-1])


@pytest.mark.parametrize("model, args, match", [
    ("gpt-5.4", {"reasoning_effort": "minimal"}, "takes none, low, medium, high, xhigh, not 'minimal'"),
    ("gpt-5", {"reasoning_effort": "none"}, "takes minimal, low, medium, high"),
    ("gpt-4o", {"reasoning_effort": "high"}, "takes no reasoning effort"),
    ("gpt-5.4", {"thinking": "on"}, "has no thinking switch; use reasoning_effort"),
    ("kimi-k2.5", {"thinking": "maybe"}, "expected on or off"),
    ("gpt-5.4", {"max_tokens": 10, "max_completion_tokens": 10}, "not both"),
    ("gpt-5.4", {"max_completion_tokens": "lots"}, "positive number of tokens"),
    ("gpt-5.4", {"timeout": 0}, "timeout"),
])
def test_a_value_the_provider_does_not_take_is_refused_before_any_request(model, args, match):
    with MockProvider(limit=1) as mock:
        with pytest.raises(ValueError, match=match):
            _bridge(mock, model=model, **args)
        assert mock.bodies == []


def test_a_refused_request_stops_with_the_providers_message():
    """lmms-eval's own request for GPT-5.x (max_tokens, temperature 0), and a user's max_tokens override: the
    provider's 400 is raised at once, with its words, not retried and not returned as text."""
    old_request = {"model": "gpt-5.4", "messages": [{"role": "user", "content": "Question?"}], "max_tokens": 256,
                   "temperature": 0}
    with MockProvider(limit=3) as mock:
        bridge = _bridge(mock, model="gpt-5.4", max_retries=5)
        with pytest.raises(ProviderRefused, match="HTTP 400: Unsupported parameter: 'max_tokens' is not supported"):
            bridge._send(old_request)
        assert len(mock.bodies) == 1, "a permanent error is not retried"
        with pytest.raises(ProviderRefused, match="Use 'max_completion_tokens' instead"):
            _ask(_bridge(mock, model="gpt-5.4", max_tokens=64))
        assert mock.bodies[1]["max_tokens"] == 64
    with MockProvider([status(401, "Incorrect API key provided")], limit=1) as mock:
        with pytest.raises(ProviderRefused, match="HTTP 401: Incorrect API key provided"):
            _ask(_bridge(mock, model="gpt-5.4", max_retries=5))


def test_transient_errors_are_retried_with_bounded_backoff(monkeypatch):
    from medhorizon_tasks.adapters.lmms_eval.bridges import openai as bridge_module

    waits = []
    monkeypatch.setattr(bridge_module.time, "sleep", waits.append)
    script = [status(429, "Rate limit reached", {"Retry-After": "7"}), status(503, "overloaded"), answer("C")]
    with MockProvider(script, limit=3) as mock:
        assert _ask(_bridge(mock, model="gpt-5.4", max_retries=3, retry_backoff_s=2)) == "C"
    assert len(mock.bodies) == 3
    assert waits[0] == 7.0 and 2 * 2 * 0.5 <= waits[1] <= 2 * 2, "Retry-After, then base * 2**k with jitter"
    with MockProvider([status(500, "boom")] * 3, limit=3) as mock:
        text = _ask(_bridge(mock, model="gpt-5.4", max_retries=3))
    failure = response_failure(text)
    assert failure.status == REQUEST_ERROR and failure.reason == "after 3 attempt(s): HTTP 500: boom"


def test_the_timeout_model_arg_is_honoured():
    """A reply slower than ``timeout`` is not waited for: the attempt fails and is retried, then recorded as a
    request error (before, the 3 s reply was waited for in full and scored)."""
    with MockProvider([sleep(3, answer("A")), sleep(3, answer("A"))], limit=2) as mock:
        text = _ask(_bridge(mock, model="gpt-5.4", timeout=0.5, max_retries=2))
    failure = response_failure(text)
    assert failure is not None and failure.status == REQUEST_ERROR, text
    assert failure.reason == "after 2 attempt(s): no complete reply within the 0.5 s timeout"


def test_an_empty_or_cut_off_reply_is_truncated_never_an_answer():
    with MockProvider([answer("", "stop"), answer("The answer is B", "length"), answer(None, "content_filter")],
                      limit=3) as mock:
        bridge = _bridge(mock, model="gpt-5.4")
        empty, cut, filtered = _ask(bridge), _ask(bridge), _ask(bridge)
    assert response_failure(empty).status == TRUNCATED and "finish_reason=stop" in empty
    assert response_failure(cut).reason == "finish_reason=length (max_completion_tokens=256)"
    assert cut.endswith("The answer is B"), "the partial text is kept for the record"
    assert response_failure(filtered).status == REFUSED and "content_filter" in filtered


def test_a_content_filtered_reply_is_refused_even_with_an_answer_in_it():
    """``finish_reason: content_filter`` with partial text "The answer is B": refused, its text kept for the
    record and never extracted (before: scored as B)."""
    with MockProvider([answer("The answer is B", "content_filter")], limit=1) as mock:
        text = _ask(_bridge(mock, model="gpt-5.4"))
    assert response_failure(text) == Failure(REFUSED, "finish_reason=content_filter")
    assert text.endswith("The answer is B")


@pytest.mark.parametrize("message, code", [
    ("Invalid prompt: your prompt was flagged as potentially violating our usage policy.", "invalid_prompt"),
    ("The response was filtered due to the prompt triggering Azure OpenAI's content management policy.",
     "content_filter"),
    ("Your request was rejected as a result of our safety system.", None),
])
def test_a_content_policy_400_is_that_items_refusal_and_the_run_goes_on(message, code):
    """A 400 that refuses one item for its content is ``refused``, not retried, and the items after it are asked
    (the first request is still sent alone, and so is the next one after a content refusal)."""
    from types import SimpleNamespace

    script = [status(400, message, error_code=code), answer("C"), answer("D")]
    with MockProvider(script, limit=3) as mock:
        bridge = _bridge(mock, model="gpt-5.4", max_retries=5, num_concurrent=2)
        bridge.task_dict = {"t": {"test": [{}] * 3}}
        requests = [SimpleNamespace(args=(f"Question {i}?", dict(TASK), lambda doc: None, i, "t", "test"),
                                    task_name="t", doc_id=i) for i in range(3)]
        texts = [r.text for r in bridge.generate_until(requests)]
    assert len(mock.bodies) == 3, "refused once, not retried; the other items asked"
    assert response_failure(texts[0]).status == REFUSED and message[:40] in texts[0]
    assert texts[1:] == ["C", "D"]


def test_a_parameter_400_still_stops_at_the_first_request():
    assert content_refusal(400, "unsupported_parameter", "Unsupported parameter: 'max_tokens'") is False
    assert content_refusal(401, None, "your prompt was flagged as violating our usage policy") is False
    assert content_refusal(400, None, "Invalid prompt: flagged by usage policy") is True


@pytest.mark.parametrize("code", [408, 409, 500, 502])
def test_408_409_and_5xx_are_retried(code, monkeypatch):
    from medhorizon_tasks.adapters.lmms_eval.bridges import openai as bridge_module

    monkeypatch.setattr(bridge_module.time, "sleep", lambda s: None)
    with MockProvider([status(code, "try again"), answer("C")], limit=2) as mock:
        assert _ask(_bridge(mock, model="gpt-5.4", max_retries=2)) == "C"
    assert len(mock.bodies) == 2


def test_the_timeout_is_the_deadline_of_the_whole_reply():
    """A reply trickled over 6 s, no wait for a byte longer than a fraction of a second: cut at ``timeout=1``
    (before: waited for in full and scored, as the HTTP client's timeout bounds each read only)."""
    with MockProvider([trickle(6, answer("A"))], limit=1) as mock:
        text = _ask(_bridge(mock, model="gpt-5.4", timeout=1, max_retries=1))
    failure = response_failure(text)
    assert failure is not None and failure.status == REQUEST_ERROR, text
    assert failure.reason == "after 1 attempt(s): no complete reply within the 1 s timeout"


def test_text_only_requests_follow_the_rule_too():
    """The text and blind tasks (no frames) and an item whose video failed (an empty plan) are sent by the bridge
    with the provider's rule, not by lmms-eval's wrapper (max_tokens and temperature 0 to every model)."""
    with MockProvider(limit=2) as mock:
        bridge = _bridge(mock, model="gpt-5.1", reasoning_effort="high")
        for frames in (None, PlannedFrames([], error="item 3: video file not found")):
            assert bridge._send(bridge.planned_payload("Question?", frames, dict(TASK))).text == "B"
    assert [b["messages"][0]["content"] for b in mock.bodies] == [[{"type": "text", "text": "Question?"}]] * 2
    assert all("max_tokens" not in b and b["reasoning_effort"] == "high" for b in mock.bodies)


def test_request_fields_is_pure_data():
    assert request_fields("gpt-5.4", 25_000, 0, {"reasoning_effort": "high"}) == {
        "max_completion_tokens": 25_000, "reasoning_effort": "high"}
    assert request_fields("openai/gpt-5.4", 5) == {"max_tokens": 5, "temperature": 0}, "a router's own rule"
    assert request_fields("my-local-model", 5, 0.2) == {"max_tokens": 5, "temperature": 0.2}
    assert all(r.source.startswith("https://") for r in RULES), "each rule cites the provider's page"
