"""What a well-known image is, in words: ``rabbitmq:3.6.8-management`` -> ``RabbitMQ is an open source
multi-protocol messaging broker.``

Agents ask for infrastructure by what it does ("which message queue do the orders go through",
"where is the cart stored", "what database backs the catalogue"); a workload's document says only
``images: rabbitmq:3.6.8-management``, and a small embedding model does not reliably know that
RabbitMQ is a queue. So a workload whose image is well known says what it is (``software: ...``).

The words come from the catalogue (:mod:`kubevec.inference.catalogue`: about a thousand images from
pinned public sources, matched on the repository path, longest suffix first). The hand list below
is only what those sources lack; it matches the repository's last segment exactly:
``kbudde/rabbitmq-exporter`` is an exporter, not RabbitMQ.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

from kubevec.inference import catalogue

#: Repository name -> what it is, for common servers none of the catalogue's sources describe under
#: that name (CockroachDB, ClickHouse's server, Confluent's Kafka, Envoy, Alertmanager, Loki, Dex).
SOFTWARE: Final[dict[str, str]] = {
    "cockroach": "CockroachDB (distributed SQL database).",
    "clickhouse-server": "ClickHouse (analytics database).",
    "cp-kafka": "Kafka (event streaming, message broker).",
    "envoy": "Envoy (proxy).",
    "alertmanager": "Alertmanager (alert routing).",
    "loki": "Loki (log store).",
    "dex": "Dex (identity, single sign-on).",
}


def repository(image: str) -> str:
    """``docker.io/library/redis:7-alpine@sha256:...`` -> ``redis``."""
    return image.partition("@")[0].rpartition("/")[2].partition(":")[0].lower()


def describe(image: str) -> str | None:
    """What ``image`` is: the catalogue's line, else the hand list's; None for an image nobody describes."""
    return catalogue.lookup(image) or SOFTWARE.get(repository(image))


#: Programs that run other software (shells, interpreters, init shims): their name says nothing of it.
RUNNERS: Final = frozenset(
    {"sh", "bash", "ash", "dash", "zsh", "python", "python3", "node", "java", "ruby", "perl", "php", "dotnet",
     "tini", "dumb-init", "su-exec", "gosu", "exec", "env", "nohup"}
)  # fmt: skip


def program_line(program: str) -> str | None:
    """What a container's program is, when its name or its leading words are a whole catalogue name
    (``zookeeper-server-start.sh`` -> ZooKeeper, ``schema-registry-start`` -> Schema Registry): an image
    that bundles several (``solsson/kafka`` runs Kafka's brokers and ZooKeeper) says less than that."""
    words = program.lower().removesuffix(".sh").split("-")
    if not words[0] or words[0] in RUNNERS:
        return None
    table = catalogue.images()
    for size in range(len(words), 0, -1):
        key = "-".join(words[:size])
        if line := table.get(key) or SOFTWARE.get(key):
            return line
        if words[size - 1] not in _ROLES:
            return None  # ``kafka-manager`` is a tool for Kafka, not Kafka: only a role word is left off
    return None


#: Words a program's name adds to its software's (``redis-server``, ``kafka-server-start``).
_ROLES: Final = frozenset({"server", "start", "run", "daemon", "standalone", "foreground"})


def described(images: Iterable[str], *, names: Iterable[str] = (), programs: Iterable[str] = ()) -> list[str]:
    """What the software among ``programs`` and ``images`` is, each once, programs first.

    When neither is known, the workload's own names may say it (``names``: its name, its
    ``app.kubernetes.io/name`` label): a Deployment ``jaeger`` runs ``jaegertracing/all-in-one``, a
    path no source keys, but ``jaeger`` is a well-known name. Only a whole catalogue name counts."""
    run = [line for program in programs if (line := program_line(program))]
    found = list(dict.fromkeys([*run, *(line for image in images if (line := describe(image)))]))
    if found:
        return found
    table = catalogue.images()
    for name in names:
        key = name.strip().lower()
        if line := (table.get(key) if "/" not in key else None) or SOFTWARE.get(key):
            return [line]
    return []
