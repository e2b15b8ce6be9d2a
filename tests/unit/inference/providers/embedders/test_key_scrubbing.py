"""No key anywhere: what a server echoes is decoded, scrubbed and only then cut; readiness shows no body."""

from __future__ import annotations

import json
import urllib.parse

import httpx
import pytest

from kubevec.core.errors import EmbedderError
from kubevec.inference.providers.config import EmbedderSettings, LLMSettings
from kubevec.inference.providers.embedders.remote import HttpCalls, Scrubber

KEY = "sk-live-4f9a2c7e1b3d5f8a0c2e4b6d"


def calls(body: str, status: int = 400) -> HttpCalls:
    transport = httpx.MockTransport(lambda request: httpx.Response(status, text=body))
    return HttpCalls(
        provider="openai",
        base_url="http://embed.invalid/v1",
        headers={"Authorization": f"Bearer {KEY}"},
        secrets=[KEY],
        max_attempts=1,
        transport=transport,
    )


def escaped(text: str) -> str:
    """Every character as a JSON ``\\uXXXX`` escape, as some servers echo input."""
    return "".join(f"\\u{ord(c):04x}" for c in text)


@pytest.mark.parametrize(
    "body",
    [
        "x" * (300 - len(KEY) - 4) + f" key {KEY} was refused",  # the cut at 300 would leave all but its last character
        json.dumps({"error": f"unknown key {KEY.replace('-', '@')}"}).replace("@", "\\u002d"),
        json.dumps({"error": "unknown key " + escaped(KEY)}),
        json.dumps({"error": "bad request"}).replace("bad", "bad " + urllib.parse.quote(KEY, safe="")),
        f'{{"error": "key {KEY.replace("-", "%2D")}"}}',
        f'{{"error": "url http:\\/\\/x\\/{KEY}"}}',
    ],
)
async def test_a_key_echoed_in_any_encoding_or_across_the_cut_is_never_shown(body: str) -> None:
    with pytest.raises(EmbedderError) as caught:
        await calls(body).post("/embeddings", {"input": ["x"]})
    message = str(caught.value)
    assert KEY not in message
    assert KEY[:-1] not in message
    assert KEY[4:] not in message
    assert caught.value.status == 400


def test_the_scrubber_cuts_after_it_scrubs() -> None:
    scrub = Scrubber([KEY])
    text = scrub("a" * 295 + KEY, limit=300)
    assert "sk-live" not in text
    assert text.endswith("***")


async def test_readiness_names_provider_reason_and_status_never_the_body() -> None:
    with pytest.raises(EmbedderError) as caught:
        await calls(f"your key {escaped(KEY)} is not allowed for this model", status=400).post("/embeddings", {})
    public = caught.value.public(provider="openai")
    assert public == "embedder failing provider=openai reason=refused status=400"


def test_userinfo_in_a_base_url_is_refused_beside_a_key() -> None:
    with pytest.raises(ValueError, match="base_url holds credentials"):
        EmbedderSettings(provider="openai", base_url="https://user:pw@embed.example.com/v1", api_key=KEY)
    with pytest.raises(ValueError, match="base_url holds credentials"):
        EmbedderSettings(provider="openai", base_url="https://user@embed.example.com/v1", headers={"X-Key": "k"})
    assert EmbedderSettings(provider="openai", base_url="https://user:pw@embed.example.com/v1").base_url
    with pytest.raises(ValueError, match="url holds credentials"):
        LLMSettings(url="https://u:p@llm.example.com", api_key=KEY)


async def test_a_password_in_a_base_url_is_scrubbed_from_transport_errors() -> None:
    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot connect to {request.url} as hunter2pass")

    http = HttpCalls(
        provider="openai",
        base_url="http://user:hunter2pass@127.0.0.1:9/v1",
        headers={},
        max_attempts=1,
        transport=httpx.MockTransport(refuse),
    )
    with pytest.raises(EmbedderError) as caught:
        await http.post("/embeddings", {})
    assert "hunter2pass" not in str(caught.value)
