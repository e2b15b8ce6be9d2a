"""A 401 loads the credentials again once; the pre-flight asks again (tenacity) what may pass, never a refusal."""

from __future__ import annotations

from typing import Any

import pytest
from kubernetes import client

from kubevec.controller.kube import client as kube_client
from kubevec.controller.kube.client import KubeReader, preflight
from kubevec.core.errors import KubeError, KubeForbidden, KubeServerError, KubeUnauthorized


class Scripted(KubeReader):
    """Answers ``_send`` from a script (an exception is raised, anything else returned) and counts reloads."""

    def __init__(self, *script: Any, reloadable: bool = True) -> None:
        super().__init__()
        self._reloadable = reloadable
        self.script = list(script)
        self.reloads = 0

    def _send(self, method: str, path: str, **kwargs: Any) -> Any:
        answer = self.script.pop(0)
        if isinstance(answer, BaseException):
            raise answer
        return answer

    def _reload(self, why: str, **kwargs: Any) -> None:
        self.reloads += 1


def unauthorized() -> KubeUnauthorized:
    return KubeUnauthorized("GET /x failed: HTTP 401", reason="HTTP 401", status=401)


def test_a_401_reloads_the_credentials_and_asks_once_more() -> None:
    reader = Scripted(unauthorized(), {"ok": True})
    assert reader._request("GET", "/x") == {"ok": True}
    assert reader.reloads == 1


def test_a_second_401_is_the_error_and_no_other_class_stands_in_for_it() -> None:
    reader = Scripted(unauthorized(), unauthorized())
    with pytest.raises(KubeUnauthorized) as raised:
        reader._request("GET", "/x")
    assert reader.reloads == 1
    assert raised.value.__cause__ is None


def test_a_client_given_to_the_reader_is_not_reloaded() -> None:
    reader = Scripted(unauthorized(), reloadable=False)
    with pytest.raises(KubeUnauthorized):
        reader._request("GET", "/x")
    assert reader.reloads == 0


def test_preflight_asks_again_what_may_pass(monkeypatch: pytest.MonkeyPatch) -> None:
    answers: list[Any] = [KubeServerError("GET /version failed: HTTP 503", reason="HTTP 503"), {"gitVersion": "v1.31"}]
    slept: list[float] = []
    monkeypatch.setattr(kube_client.KubeReader, "_request", lambda self, *a, **k: _next(answers))
    version = preflight(client.Configuration(host="https://api.invalid"), delay=2.0, sleep=slept.append)
    assert version == "v1.31"
    assert slept == [2.0]


@pytest.mark.parametrize("refusal", [unauthorized(), KubeForbidden("GET /version failed: HTTP 403", reason="HTTP 403")])
def test_preflight_does_not_ask_again_when_refused(monkeypatch: pytest.MonkeyPatch, refusal: KubeError) -> None:
    answers: list[Any] = [refusal, {"gitVersion": "v1.31"}]
    slept: list[float] = []
    monkeypatch.setattr(kube_client.KubeReader, "_request", lambda self, *a, **k: _next(answers))
    with pytest.raises(KubeError, match=r"cannot reach the Kubernetes API at https://api\.invalid: HTTP 40"):
        preflight(client.Configuration(host="https://api.invalid"), sleep=slept.append)
    assert slept == []


def test_preflight_gives_up_after_its_attempts(monkeypatch: pytest.MonkeyPatch) -> None:
    asked: list[int] = []

    def down(self: KubeReader, *args: Any, **kwargs: Any) -> Any:
        asked.append(1)
        raise KubeError("GET /version failed: ConnectionRefusedError", reason="Connection refused")

    monkeypatch.setattr(kube_client.KubeReader, "_request", down)
    with pytest.raises(KubeError, match="Connection refused"):
        preflight(client.Configuration(host="https://api.invalid"), attempts=3, delay=0.5, sleep=lambda _: None)
    assert len(asked) == 3


def _next(answers: list[Any]) -> Any:
    answer = answers.pop(0)
    if isinstance(answer, BaseException):
        raise answer
    return answer
