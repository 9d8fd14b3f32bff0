"""An endpoint that refuses `tool_choice: required` (llama-cpp-python 0.2.x answers it with an HTTP 500 carrying
pydantic's validation error, issue #48) is asked once more with `auto`, with one warning naming the setting; a 5xx
validation error is not retried as transient and says what to change."""

from __future__ import annotations

import logging

import pytest

from ark.llm import LLMError
from ark.llm.negotiation import TOOL_CHOICES
from tests.llm.test_openai_client import ask, make_client, run
from tests.support.openai_server import http_error, raw_reply, tool_reply

# The shape of llama-cpp-python 0.2.62's refusal: its route handler turns the request model's pydantic error
# into an HTTP 500 with the error text as the message.
REFUSED_REQUIRED = ("1 validation error for CreateChatCompletionRequest\ntool_choice\n  Input should be 'none' "
                    "or 'auto' [type=literal_error, input_value='required', input_type=str]")
REFUSED_SEED = ("1 validation error for CreateChatCompletionRequest\nseed\n  Input should be a valid integer "
                "[type=int_type, input_value=4.5, input_type=float]")
# llama-cpp-python 0.3.36's: chatml-function-calling asserts tool_choice is not "required"; the server turns the
# AssertionError (whose text is empty) into an HTTP 500 with an empty message.
BLANK_500 = '{"error": {"message": "", "type": "internal_server_error", "param": null, "code": null}}'
SEARCH = tool_reply(("search_in_graph", {"query": "seizure"}))


@pytest.fixture(autouse=True)
def fresh_memory():
    TOOL_CHOICES.forget()
    yield
    TOOL_CHOICES.forget()


def _warnings(caplog) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]


def test_refused_required_falls_back_to_auto_once_with_one_warning(openai_server, caplog):
    openai_server.enqueue(http_error(500, REFUSED_REQUIRED), SEARCH, SEARCH)
    client = make_client(openai_server, max_retries=3)

    with caplog.at_level(logging.WARNING):
        first = run(ask(client))
        second = run(ask(client, agent_index=1))

    sent = [r["tool_choice"] for r in openai_server.requests]
    assert sent == ["required", "auto", "auto"]  # the 500 not resent; the choice remembered for the endpoint
    assert first.message.tool_calls[0].name == "search_in_graph"
    assert second.message.tool_calls
    warnings = _warnings(caplog)
    assert len(warnings) == 1 and "--set tool_choice=auto" in warnings[0]
    assert openai_server.base_url in warnings[0]


def test_a_blank_500_to_required_is_that_refusal_not_a_transient_error(openai_server, caplog):
    openai_server.enqueue(raw_reply(BLANK_500, status=500), SEARCH)
    client = make_client(openai_server, max_retries=3)
    with caplog.at_level(logging.WARNING):
        reply = run(ask(client))

    assert [r["tool_choice"] for r in openai_server.requests] == ["required", "auto"]  # not resent 3 more times
    assert reply.message.tool_calls and len(_warnings(caplog)) == 1


def test_a_blank_500_to_auto_stays_transient(openai_server):
    openai_server.enqueue(raw_reply(BLANK_500, status=500), SEARCH)
    reply = run(ask(make_client(openai_server, max_retries=2), tool_choice="auto"))

    assert [r["tool_choice"] for r in openai_server.requests] == ["auto", "auto"]  # retried as before
    assert reply.message.tool_calls


def test_the_choice_is_remembered_per_endpoint_for_other_clients(openai_server, caplog):
    openai_server.enqueue(http_error(500, REFUSED_REQUIRED), SEARCH, SEARCH)
    with caplog.at_level(logging.WARNING):
        run(ask(make_client(openai_server)))
        run(ask(make_client(openai_server)))

    assert [r["tool_choice"] for r in openai_server.requests] == ["required", "auto", "auto"]
    assert len(_warnings(caplog)) == 1


def test_a_4xx_naming_tool_choice_falls_back_too(openai_server):
    openai_server.enqueue(http_error(400, "tool_choice 'required' is not supported"), SEARCH)
    reply = run(ask(make_client(openai_server)))

    assert [r["tool_choice"] for r in openai_server.requests] == ["required", "auto"]
    assert reply.message.tool_calls


def test_a_refused_fallback_fails_after_one_retry(openai_server):
    openai_server.enqueue(http_error(500, REFUSED_REQUIRED), http_error(500, REFUSED_REQUIRED))
    with pytest.raises(LLMError, match="--set tool_choice=auto"):
        run(ask(make_client(openai_server, max_retries=3)))
    assert openai_server.request_count == 2


def test_auto_asked_for_is_not_renegotiated(openai_server):
    openai_server.enqueue(http_error(500, REFUSED_REQUIRED))
    with pytest.raises(LLMError, match="refused the request as invalid"):
        run(ask(make_client(openai_server, max_retries=3), tool_choice="auto"))
    assert openai_server.request_count == 1


def test_a_5xx_validation_error_is_not_retried_and_names_the_setting(openai_server):
    openai_server.enqueue(http_error(500, REFUSED_SEED))
    with pytest.raises(LLMError) as caught:
        run(ask(make_client(openai_server, max_retries=3)))

    assert openai_server.request_count == 1  # not the 4 retries of a transient 500
    message = str(caught.value)
    assert "HTTP 500" in message and "not retried" in message and "`seed`" in message
    assert "still failing" not in message


def test_a_plain_5xx_is_still_transient(openai_server):
    openai_server.enqueue(http_error(500, "CUDA out of memory"), SEARCH)
    reply = run(ask(make_client(openai_server, max_retries=2)))
    assert openai_server.request_count == 2 and reply.message.tool_calls
