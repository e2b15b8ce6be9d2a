"""What a well-known image is, in words: ``rabbitmq:3.6.8-management`` -> ``RabbitMQ (message broker, queue)``.

Agents ask for infrastructure by what it does ("which message queue do the orders go through",
"where is the cart stored", "what database backs the catalogue"); a workload's document says only
``images: rabbitmq:3.6.8-management``, and a small embedding model does not reliably know that
RabbitMQ is a queue. So a workload whose image is one of the common servers below says so in its
text (``software: ...``). The match is on the image's repository name alone (the last path
segment, without tag or digest), exactly: ``kbudde/rabbitmq-exporter`` is an exporter, not RabbitMQ.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Final

#: Repository name -> what it is. The servers public applications and clusters run most.
SOFTWARE: Final[dict[str, str]] = {
    "redis": "Redis (in-memory key-value store, cache)",
    "valkey": "Valkey (in-memory key-value store, cache)",
    "memcached": "Memcached (in-memory cache)",
    "mongo": "MongoDB (document database)",
    "mongodb": "MongoDB (document database)",
    "postgres": "PostgreSQL (relational database)",
    "postgresql": "PostgreSQL (relational database)",
    "mysql": "MySQL (relational database)",
    "mariadb": "MariaDB (relational database)",
    "cockroach": "CockroachDB (distributed SQL database)",
    "cassandra": "Cassandra (wide-column database)",
    "clickhouse-server": "ClickHouse (analytics database)",
    "influxdb": "InfluxDB (time-series database)",
    "elasticsearch": "Elasticsearch (search engine, document store)",
    "opensearch": "OpenSearch (search engine, document store)",
    "rabbitmq": "RabbitMQ (message broker, queue)",
    "kafka": "Kafka (event streaming, message broker)",
    "cp-kafka": "Kafka (event streaming, message broker)",
    "nats": "NATS (messaging)",
    "zookeeper": "ZooKeeper (coordination service)",
    "etcd": "etcd (key-value store)",
    "nginx": "NGINX (web server, reverse proxy)",
    "haproxy": "HAProxy (load balancer, proxy)",
    "envoy": "Envoy (proxy)",
    "traefik": "Traefik (reverse proxy, ingress)",
    "minio": "MinIO (S3-compatible object storage)",
    "prometheus": "Prometheus (metrics, monitoring)",
    "grafana": "Grafana (dashboards)",
    "alertmanager": "Alertmanager (alert routing)",
    "loki": "Loki (log store)",
    "fluentd": "Fluentd (log collector)",
    "fluent-bit": "Fluent Bit (log collector)",
    "jaeger": "Jaeger (tracing)",
    "zipkin": "Zipkin (tracing)",
    "vault": "Vault (secrets management)",
    "keycloak": "Keycloak (identity, single sign-on)",
    "dex": "Dex (identity, single sign-on)",
}


def repository(image: str) -> str:
    """``docker.io/library/redis:7-alpine@sha256:...`` -> ``redis``."""
    return image.partition("@")[0].rpartition("/")[2].partition(":")[0].lower()


def described(images: Iterable[str]) -> list[str]:
    """What the well-known images among ``images`` are, each once, in their order."""
    return list(dict.fromkeys(found for image in images if (found := SOFTWARE.get(repository(image)))))
