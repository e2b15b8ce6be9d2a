"""A configuration error names the setting and the problem, never the values (which may be secrets)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from kubevec.controller.cli import main
from kubevec.controller.settings import Settings


def test_an_invalid_configuration_is_reported_without_its_secrets(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBEVEC_STORE__BACKEND", "pgvector")
    monkeypatch.setenv("KUBEVEC_STORE__URL", "mysql://kubevec:url-secret@db:3306/kubevec")
    monkeypatch.setenv("KUBEVEC_STORE__PASSWORD", "password-secret")
    monkeypatch.setenv("KUBEVEC_EMBEDDER__API_KEY", "api-key-secret")
    assert main(["search", "postgres"]) == 2
    err = capsys.readouterr().err
    assert "KUBEVEC_STORE: Value error, store.backend=pgvector needs store.url=postgresql://" in err
    for secret in ("url-secret", "password-secret", "api-key-secret"):
        assert secret not in err


def test_each_bad_field_is_named_as_its_variable(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setenv("KUBEVEC_SYNC__BATCH_SIZE", "many")
    assert main(["search", "postgres"]) == 2
    assert "KUBEVEC_SYNC__BATCH_SIZE: Input should be a valid integer" in capsys.readouterr().err


def test_an_unknown_log_format_is_named(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("KUBEVEC_LOG_FORMAT", "yaml")
    assert main(["search", "postgres"]) == 2
    assert "KUBEVEC_LOG_FORMAT: Input should be 'text' or 'json'" in capsys.readouterr().err


def test_every_flag_and_argument_has_help_text() -> None:
    import argparse

    from kubevec.controller.cli import build_parser

    missing: list[str] = []

    def walk(parser: argparse.ArgumentParser, path: str) -> None:
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    walk(sub, f"{path} {name}")
            elif not action.help and not isinstance(action, argparse._HelpAction):
                missing.append(f"{path} {'/'.join(action.option_strings) or action.dest}")

    walk(build_parser().complete(nested=True), "kubevec")
    assert not missing


def test_label_selectors_are_read_as_kubectl_reads_them() -> None:
    from kubevec.controller.cli import build_parser
    from kubevec.controller.cli.request_flags import request_fields
    from kubevec.query.request import SearchRequest

    args = build_parser().parse_args(["search", "x", "-l", "app=web,tier=db", "-l", " team=a ", "-n", "prod"])
    fields = request_fields(args, SearchRequest)
    assert fields == {"query": "x", "labels": ["app=web", "tier=db", "team=a"], "namespace": "prod"}
    top = build_parser().parse_args(["--kubeconfig", "/k", "--context", "prod", "run", "-n", "shop"])
    assert (str(top.kubeconfig), top.context, top.namespace) == ("/k", "prod", "shop")


def test_every_search_request_field_is_a_search_flag_with_the_models_defaults() -> None:
    from kubevec.controller.cli import build_parser
    from kubevec.controller.cli.request_flags import request_fields
    from kubevec.query.request import SearchRequest

    parser = build_parser()
    argv = [
        "search", "q", "--collection", "instances", "--keyword", "w", "--filter", '{"kind": "Pod"}', "--kind", "Pod",
        "--group", "apps", "-n", "a", "--health", "degraded", "--cluster", "c", "-l", "x=y", "-k", "7",
        "--no-hybrid", "--mmr", "--no-rerank", "--mmr-lambda", "0.3", "--fetch-k", "40", "--min-score", "0.2", "--no-names",
    ]  # fmt: skip
    fields = request_fields(parser.parse_args(argv), SearchRequest)
    assert set(fields) == set(SearchRequest.model_fields) - {"cursor", "count_by"}
    request = SearchRequest.build(**fields)
    assert (request.hybrid, request.rerank, request.mmr, request.fetch_k, request.k) == (False, False, True, 40, 7)
    assert request.names is False
    assert request.filter == {"kind": "Pod"}
    assert request.labels == ("x=y",)
    # nothing given: nothing passed, so the model's defaults are the only ones
    assert request_fields(parser.parse_args(["search", "--kind", "Pod"]), SearchRequest) == {
        "query": None,
        "kind": "Pod",
    }


def test_a_new_request_field_becomes_a_flag_without_anyone_writing_it() -> None:
    """What makes one search option a change to two places: the request, and the code that honours it."""
    import argparse
    from typing import Annotated, Literal

    from pydantic import BaseModel, Field

    from kubevec.controller.cli.request_flags import add_request_flags, request_fields

    class Request(BaseModel):
        query: str | None = None
        max_age_days: Annotated[int | None, Field(ge=1, le=30, description="Only objects younger than this.")] = None
        phase: Annotated[Literal["Running", "Pending"] | None, Field(description="Only this phase.")] = None
        exact: Annotated[bool, Field(description="Match names exactly.")] = False

    parser = argparse.ArgumentParser()
    add_request_flags(parser, Request)
    args = parser.parse_args(["--max-age-days", "3", "--phase", "Running", "--exact"])
    assert request_fields(args, Request) == {"query": None, "max_age_days": 3, "phase": "Running", "exact": True}
    assert "(1-30)" in parser.format_help()
    with pytest.raises(SystemExit):
        parser.parse_args(["--phase", "Lost"])


def test_status_shows_the_most_frequent_kinds_that_fit_and_counts_the_rest() -> None:
    from kubevec.controller.cli.status import kinds_line as _kinds_line

    assert _kinds_line({}) == "(no kinds)"
    assert _kinds_line({"Pod": 12, "Service": 3}) == "Pod 12, Service 3"
    many = {f"Kind{i:02d}": 100 - i for i in range(30)}
    line = _kinds_line(many, width=40)
    assert line == "Kind00 100, Kind01 99, Kind02 98, ... (+27 kinds)"


async def test_one_shot_commands_keep_int8_weights_a_server_folds_them(monkeypatch: pytest.MonkeyPatch) -> None:
    """One query per process: loading without constant folding is faster than what it costs that query."""
    from kubevec.backends.memory import MemoryStore
    from kubevec.controller.cli import common as cli_common
    from kubevec.query.request import SearchRequest
    from tests.doubles.embedders import CountingEmbedder

    loaded: list[bool] = []
    verified: list[Path | None] = []

    def make_embedder(settings: Any, *, verified_dir: Path | None = None) -> CountingEmbedder:
        loaded.append(settings.int8_weights)
        verified.append(verified_dir)
        return CountingEmbedder()

    monkeypatch.setattr("kubevec.inference.providers.config.make_embedder", make_embedder)
    settings = Settings()
    store = MemoryStore()
    await store.ensure_collection(settings.collection("capabilities"), dimension=16, embedder="counting-test-embedder")
    for one_shot in (True, False):
        service = cli_common.search_service(settings, store, embedder=True, one_shot=one_shot)
        await service.search(SearchRequest.build(query="a managed postgres", hybrid=False))
    assert loaded == [True, False]
    # A one-shot command remembers the model file it verified; a server hashes it once per start.
    assert verified == [settings.cache_dir / "verified-models", None]


@pytest.mark.parametrize(
    "argv",
    [
        ["--kubeconfig", "/tmp/k", "--context", "prod", "status"],
        ["status", "--kubeconfig", "/tmp/k", "--context", "prod"],
        ["--kubeconfig", "/tmp/k", "status", "--context", "prod"],
        ["index", "crds", "x.yaml", "--kubeconfig", "/tmp/k", "--context", "prod"],
    ],
)
def test_global_flags_work_before_or_after_the_subcommand(argv: list[str]) -> None:
    """issue 31: `kubevec status --kubeconfig x` was `unrecognized arguments`; kubectl takes both orders."""
    from kubevec.controller.cli import build_parser

    args = build_parser().parse_args(argv)
    assert (args.kubeconfig, args.context) == (Path("/tmp/k"), "prod")


def test_global_flags_default_to_none_wherever_they_are_left_out() -> None:
    from kubevec.controller.cli import build_parser

    args = build_parser().parse_args(["search", "postgres"])
    assert (args.kubeconfig, args.context) == (None, None)
