"""Who a workload calls: the network addresses its containers' env values and arguments name.

"Which database does X use" and "which services does the frontend call" are answered by an address
(``redis-cart:6379``, ``http://backend:9898``, ``db.payments.svc.cluster.local``) in an env value or
an argument. Each becomes an :class:`Address`: what is shown (scheme, host and port; never a user,
password, path or query), where it was read (the variable's name, or ``args``), and the Service it
may name. The Service is a candidate only: the builder sees one object, so ``calls`` references are
resolved against the Services the store holds when they are walked (``query/related.py``).

Read from the gate's judged copy of the object (``build_instance`` redacts first): a value the gate
dropped (``PASSWORD=mysql``) names nothing, and ``postgres://user:pw@db:5432`` is read as
``postgres://<redacted>@db:5432``, of which only ``postgres://db:5432`` is kept.
"""

from __future__ import annotations

import dataclasses
import ipaddress
import re
from collections.abc import Mapping
from typing import Any, Final

#: Where an address in ``command`` or ``args`` was read (an env variable's own name otherwise).
ARGS: Final = "args"
#: Values read per container (a longer value is read up to here).
MAX_VALUE_CHARS: Final = 2048
#: Hosts that are the container itself or every interface: a sidecar or a listen address, never a peer.
_LOCAL_HOSTS: Final = frozenset({"localhost", "ip6-localhost", "0.0.0.0"})
_LABEL: Final = r"[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?"
_HOST: Final = rf"{_LABEL}(?:\.{_LABEL}){{0,6}}"
#: An address inside a value: an optional scheme and userinfo (never kept), a DNS name or IPv4 address,
#: and an optional port; a match with neither a scheme nor a port is a plain word, not an address.
_ADDRESS: Final = re.compile(
    rf"(?<![\w.@/-])(?:(?P<scheme>[a-z][a-z0-9+.-]{{1,20}})://)?(?:[^\s/@]{{1,256}}@)?"
    rf"(?P<host>{_HOST})(?::(?P<port>\d{{2,5}}))?(?![\w.:-])"
)
_WHOLE_HOST: Final = re.compile(_HOST)
#: Schemes that name no peer on the network: an image (``docker://springcloud/task-runner:2.11``: the host
#: read is an image repository's owner), a file, a class path, an artifact.
_NO_PEER_SCHEMES: Final = frozenset({"docker", "oci", "file", "classpath", "maven", "jar", "data", "mailto"})
#: DNS service discovery as Prometheus, Thanos and Cortex write it (``dnssrv+_grpc._tcp.thanos-store.thanos:10901``,
#: ``dns+memcached:11211``): the scheme and the SRV record's ``_service._proto`` labels go, the host stays.
_DISCOVERY: Final = re.compile(r"\bdns(?:srv(?:noa)?)?\+(?:_[A-Za-z0-9-]{1,63}\.)*")
#: The variables Kubernetes sets for every Service of the namespace (``SKIPPER_SERVICE_HOST``,
#: ``SKIPPER_SERVICE_PORT_HTTP``), referred to in a value (``http://${SKIPPER_SERVICE_HOST}:${SKIPPER_SERVICE_PORT}``
#: or ``$(...)``): the Service is named, with its dashes written as underscores.
_SERVICE_LINK: Final = re.compile(r"\$[({]([A-Z][A-Z0-9_]{0,62})_SERVICE_(?:HOST|PORT(?:_[A-Z0-9_]+)?)[)}]")
#: The last word of a variable's name that says its value is an address (``DB_HOST``, ``REDIS_ADDR``,
#: ``KAFKA_BOOTSTRAP_SERVERS``): only then is a bare name (``mysql``) read as a host. ``OTEL_SERVICE_NAME=frontend``
#: and ``MODE=backend`` name no peer.
_ADDRESS_WORDS: Final = frozenset(
    {"HOST", "HOSTS", "HOSTNAME", "ADDR", "ADDRESS", "ADDRS", "URL", "URI", "ENDPOINT", "SERVER", "SERVERS", "BROKERS"}
)


#: Address words that may end a run-together last word (``PGHOST``): long enough to be no other word's end.
_RUN_TOGETHER: Final = ("HOST", "HOSTNAME", "ADDR", "ADDRESS", "URL", "URI", "ENDPOINT")


@dataclasses.dataclass(frozen=True, kw_only=True)
class Address:
    """One address a container names, and the Service it would be if the cluster has it."""

    #: What a document shows: ``scheme://host:port``, ``host:port`` or ``host`` (never userinfo or a path).
    shown: str
    host: str
    #: The env variable whose value holds it, or :data:`ARGS`.
    via: str
    #: The Service's name and namespace (None: the object's own), when the host can name one.
    service: tuple[str, str | None] | None
    #: The host's shape says in-cluster (a bare name, ``...svc[.cluster.local]``); ``name.ns`` may as well
    #: be an outside domain (``example.com``) and is only a Service if the cluster has it.
    in_cluster: bool


def container_addresses(containers: list[Mapping[str, Any]]) -> list[Address]:
    """Every address the containers' env values, commands and arguments name, once per (address, source)."""
    found: dict[tuple[str, str], Address] = {}
    for container in containers:
        for env in container.get("env") or []:
            if isinstance(env, Mapping) and isinstance(env.get("name"), str) and isinstance(env.get("value"), str):
                for address in value_addresses(env["value"], via=env["name"]):
                    found.setdefault((address.shown, address.via), address)
        for field in ("command", "args"):
            words = container.get(field)
            for word in words if isinstance(words, list) else []:
                if isinstance(word, str):
                    for address in value_addresses(word, via=ARGS):
                        found.setdefault((address.shown, address.via), address)
    return list(found.values())


def value_addresses(value: str, *, via: str) -> list[Address]:
    """The addresses in one value: URLs (``http://backend``, port optional) and ``host:port`` anywhere in
    it, the Services whose link variables it refers to, and the whole value as a host when ``via`` is a
    variable named like an address (``DB_HOST=mysql``)."""
    text = value[:MAX_VALUE_CHARS]
    out: list[Address | None] = [
        Address(shown=link, host=link, via=via, service=(link, None), in_cluster=True)
        for link in dict.fromkeys(m.group(1).lower().replace("_", "-") for m in _SERVICE_LINK.finditer(text))
    ]
    text = _DISCOVERY.sub("", text)
    bare = text.strip().lower()
    if via != ARGS and _named_like_address(via) and _WHOLE_HOST.fullmatch(bare):
        out.append(_address(scheme=None, host=bare, port=None, via=via))
    elif ":" in text:
        for match in _ADDRESS.finditer(text):
            scheme, host, port = match.group("scheme"), match.group("host"), match.group("port")
            if scheme in _NO_PEER_SCHEMES:
                continue
            if (scheme or port) and (port is None or 0 < int(port) < 65536):
                out.append(_address(scheme=scheme, host=host, port=port, via=via))
    return [a for a in out if a is not None]


def _named_like_address(name: str) -> bool:
    """The last word says address, also run into a prefix (``PGHOST``, ``REDISADDR``, ``DBURL``)."""
    words = [w for w in re.split(r"[^A-Za-z0-9]+", name.upper()) if w]
    return bool(words) and (words[-1] in _ADDRESS_WORDS or words[-1].endswith(_RUN_TOGETHER))


def _address(*, scheme: str | None, host: str, port: str | None, via: str) -> Address | None:
    """None for what is no peer: an IP address, ``localhost``, a number."""
    if host in _LOCAL_HOSTS or host.isdigit() or is_ip(host):
        return None
    shown = (f"{scheme}://" if scheme else "") + host + (f":{port}" if port else "")
    service, in_cluster = _service_of(host)
    return Address(shown=shown, host=host, via=via, service=service, in_cluster=in_cluster)


def _service_of(host: str) -> tuple[tuple[str, str | None] | None, bool]:
    """``name`` (this namespace), ``name.ns.svc[.cluster.local]`` and ``pod.name.ns.svc...`` (a headless
    Service's Pod) are in-cluster by shape; ``name.ns`` is a candidate; anything longer is an outside host."""
    parts = host.split(".")
    if len(parts) == 1:
        return (host, None), True
    if "svc" in parts[2:]:
        at = parts.index("svc", 2)
        if parts[at + 1 :] in ([], ["cluster", "local"]):
            return (parts[at - 2], parts[at - 1]), True
        return None, False
    if len(parts) == 2:
        return (parts[0], parts[1]), False
    return None, False


def is_ip(value: str) -> bool:
    """An IPv4 or IPv6 address (a ``clusterIP`` of ``None`` or a hostname is not one)."""
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True
