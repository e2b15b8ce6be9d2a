"""Reads from the Kubernetes API that kopf does not do for us: discovery, full lists, /openapi/v3.

Only get/list/watch are ever used on watched resources; the one write is the status of our own
SyncPolicy objects. The official client is synchronous, so each call runs in a worker thread.
"""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import re
import time
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path
from typing import Any, Final, Protocol

from kubernetes import client, config
from kubernetes.client.exceptions import ApiException
from tenacity import Retrying, retry_if_exception, stop_after_attempt, wait_fixed

from kubevec.controller.kube.errors import kube_error
from kubevec.controller.kube.resources import ApiResource, api_path
from kubevec.controller.kube.versions import chosen
from kubevec.core.errors import KubeError, KubeForbidden, KubeNotFound, KubeUnauthorized
from kubevec.inference.bodies import Body, as_body
from kubevec.inference.identity import ResourceRef

logger = logging.getLogger(__name__)


#: Answers that asking again cannot change: the credentials were refused.
_REFUSED: Final = (KubeUnauthorized, KubeForbidden)
#: Objects per list page (kopf's initial listings use the same size: ``controller/kopf_private/paging.py``).
PAGE_SIZE = 500
#: Credentials are loaded again this often even without a 401 (projected tokens rotate hourly).
RELOAD_SECONDS = 300.0
#: Accept header for lists of metadata only (what client-go's metadata informers ask for).
METADATA_ONLY = "application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json"
#: Accept header for aggregated discovery (GA in Kubernetes 1.30): every group's resources in one
#: answer instead of one request per group version; older servers answer the plain group list.
AGGREGATED_DISCOVERY = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,"
    "application/json"
)


def load_configuration(kubeconfig: Path | None = None, *, context: str | None = None) -> client.Configuration:
    """Credentials for this process: the service account in a pod, else the kubeconfig (and its ``context``).

    Loaded into a private Configuration (never the client library's global default), with the
    kubeconfig path given explicitly: the library resolves $KUBECONFIG once at import time.
    """
    configuration = client.Configuration()
    if kubeconfig is None and context is None:
        try:
            config.load_incluster_config(client_configuration=configuration)  # type: ignore[no-untyped-call]
            return configuration
        except config.ConfigException:
            pass
    try:
        config.load_kube_config(  # type: ignore[no-untyped-call]
            config_file=str(kubeconfig) if kubeconfig else None, context=context, client_configuration=configuration
        )
    except (config.ConfigException, OSError) as exc:
        raise KubeError(f"Cannot authenticate: not in a pod, and no usable kubeconfig ({exc})") from exc
    return configuration


def load_api_client(kubeconfig: Path | None = None, *, context: str | None = None) -> client.ApiClient:
    return client.ApiClient(load_configuration(kubeconfig, context=context))


def _status_message(payload: bytes) -> str:
    """The ``message`` of a Kubernetes Status body, or the first bytes of whatever came back."""
    try:
        message = json.loads(payload).get("message")
    except (ValueError, AttributeError):
        message = None
    return str(message)[:300] if message else payload[:200].decode(errors="replace")


def short_reason(exc: BaseException) -> str:
    """``Connection refused`` instead of urllib3's three nested reprs; the first line otherwise."""
    text = str(exc)
    errno = re.search(r"\[Errno -?\d+\] ([^'\")]+)", text)
    if errno:
        return errno.group(1).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def preflight(
    configuration: client.Configuration,
    *,
    attempts: int = 3,
    delay: float = 2.0,
    sleep: Callable[[float], None] = time.sleep,
) -> str:
    """GET /version once the credentials load: the server's version, or :class:`KubeError` in one line.

    ``kubevec run`` calls this before kopf starts, so an unreachable or refusing API server is one
    clear line and a non-zero exit, not a traceback and a retry loop. tenacity asks again after
    ``delay`` seconds, up to ``attempts`` times in all; refused credentials (401, 403) are not asked again.
    """
    quiet = copy.deepcopy(configuration)
    quiet.retries = 0  # one line per attempt, not urllib3's own retry warnings
    api = client.ApiClient(quiet)
    reader = KubeReader(api=api)
    retrying = Retrying(
        stop=stop_after_attempt(max(1, attempts)),
        wait=wait_fixed(delay),
        retry=retry_if_exception(lambda exc: isinstance(exc, KubeError) and not isinstance(exc, _REFUSED)),
        sleep=sleep,
        reraise=True,
    )
    try:
        version = retrying(reader._request, "GET", "/version", timeout=5)
    except KubeError as exc:
        raise KubeError(f"cannot reach the Kubernetes API at {configuration.host}: {exc.reason}") from exc
    finally:
        reader.close()
    return str((version or {}).get("gitVersion", "unknown"))


class ClusterReader(Protocol):
    """What the rest of the controller reads from the Kubernetes API: :class:`KubeReader` over the real
    one, a fake in tests (so fakes need no ``type: ignore``)."""

    async def get(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        request_timeout: float = 60,
        accept: str = "application/json",
    ) -> Any: ...

    async def get_object(self, resource: ApiResource, name: str, *, namespace: str | None = None) -> Body | None: ...

    async def discover(self, *, aggregated: bool = True) -> list[ApiResource]: ...

    async def list_objects(self, resource: ApiResource, *, namespace: str | None = None) -> list[Body]: ...

    def iter_pages(
        self,
        resource: ApiResource,
        *,
        namespace: str | None = None,
        page_size: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[list[Body]]: ...

    async def openapi_hashes(self) -> dict[tuple[str, str], str]: ...

    async def openapi_components(self, group: str, version: str) -> Mapping[str, Any]: ...

    async def post(self, path: str, body: Mapping[str, Any]) -> Any: ...

    async def patch_status(
        self, *, group: str, version: str, plural: str, name: str, status: Mapping[str, Any]
    ) -> None: ...

    def close(self) -> None: ...


class KubeReader:
    """Reads the API with the official client; built at once, connects on first use.

    ``api`` wins; otherwise the kubeconfig (or in-cluster credentials) are loaded on the first call,
    so the App can hold a reader from its constructor while unit tests never touch a cluster.
    """

    def __init__(
        self,
        *,
        api: client.ApiClient | None = None,
        kubeconfig: Path | None = None,
        context: str | None = None,
        page_size: int = PAGE_SIZE,
    ):
        self._client = api
        self._kubeconfig = kubeconfig
        self._context = context
        self._page_size = page_size
        self._reloadable = api is None  # a client given to us is not ours to rebuild
        self._loaded_at = time.monotonic()

    @property
    def _api(self) -> client.ApiClient:
        now = time.monotonic()
        if self._client is not None and self._reloadable and now - self._loaded_at > RELOAD_SECONDS:
            self._reload(f"credentials are re-read every {RELOAD_SECONDS:.0f}s", level=logging.DEBUG)
        if self._client is None:
            self._client = load_api_client(self._kubeconfig, context=self._context)
            self._loaded_at = now
        return self._client

    def _reload(self, why: str, *, level: int = logging.INFO) -> None:
        """Drop the client so the next call loads the kubeconfig (or the pod's token) again.

        A rotated token (a new kubeconfig, a projected ServiceAccount token refreshed by the kubelet)
        is picked up by kopf's own re-login; this is the same for the resync and the probe."""
        if self._client is not None:
            logger.log(level, "Reloading the Kubernetes credentials reason=%s", why)
        # Not closed: another worker thread may be in the middle of a request on it (the probe beside a
        # resync page); it is released with its last reference.
        self._client = None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()  # type: ignore[no-untyped-call]

    async def get(
        self,
        path: str,
        *,
        query: Mapping[str, Any] | None = None,
        request_timeout: float = 60,
        accept: str = "application/json",
    ) -> Any:
        return await asyncio.to_thread(self._get, path, dict(query or {}), request_timeout, accept)

    async def get_object(self, resource: ApiResource, name: str, *, namespace: str | None = None) -> Body | None:
        """One object, or None when it does not exist (any other failure raises)."""
        try:
            found = await self.get(f"{resource.list_path(namespace)}/{name}")
        except KubeNotFound:
            return None
        found.setdefault("apiVersion", resource.ref.api_version)
        found.setdefault("kind", resource.ref.kind)
        return as_body(found)

    def _get(self, path: str, query: dict[str, Any], timeout: float = 60, accept: str = "application/json") -> Any:
        return self._request("GET", path, query=query, timeout=timeout, accept=accept)

    def _request(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None = None,
        body: Any = None,
        content_type: str | None = None,
        accept: str = "application/json",
        timeout: float = 60,
    ) -> Any:
        """One request; on 401 the credentials are loaded again and the request is sent once more."""
        try:
            return self._send(
                method, path, query=query, body=body, content_type=content_type, accept=accept, timeout=timeout
            )
        except KubeUnauthorized:
            if not self._reloadable:
                raise
            self._reload("the API server answered 401 Unauthorized")
        return self._send(
            method, path, query=query, body=body, content_type=content_type, accept=accept, timeout=timeout
        )

    def _send(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, Any] | None,
        body: Any,
        content_type: str | None,
        accept: str,
        timeout: float,
    ) -> Any:
        headers = {"Accept": accept}
        if content_type:
            headers["Content-Type"] = content_type
        try:
            serialized = self._api.param_serialize(
                method,
                path,
                query_params=list((query or {}).items()),
                header_params=headers,
                body=body,
                auth_settings=["BearerToken"],
            )
            response = self._api.call_api(*serialized, _request_timeout=timeout)
            payload = response.read()  # type: ignore[no-untyped-call]
        except ApiException as exc:
            reason = f"HTTP {exc.status} {exc.reason}"
            error = kube_error(f"{method} {path} failed: {reason}", status=exc.status, reason=reason)
            if isinstance(error, KubeUnauthorized):
                raise error from None  # the client's exception is not chained: it is the 401 said again
            raise error from exc
        except Exception as exc:
            reason = short_reason(exc)
            raise KubeError(f"{method} {path} failed: {type(exc).__name__}: {reason}", reason=reason) from exc
        if not 200 <= response.status < 300:
            reason = f"HTTP {response.status}: {_status_message(payload)}"
            error = kube_error(f"{method} {path} failed: {reason}", status=response.status, reason=reason)
            raise error
        return json.loads(payload) if payload else None

    async def discover(self, *, aggregated: bool = True) -> list[ApiResource]:
        """Every top-level resource once, at its group's preferred version if it is served there, else
        at its own highest-priority version (``controller/kube/versions.py``); subresources left out.

        Two requests with aggregated discovery (measured at 800 CRDs: 2.1 s of one request per
        group -> ~0.1 s); a server without it (or ``aggregated=False``) gets one request per group
        version.
        """
        resources: list[ApiResource] = []
        for root in ("/api", "/apis"):
            listing = await self.get(root, accept=AGGREGATED_DISCOVERY if aggregated else "application/json")
            if listing.get("kind") == "APIGroupDiscoveryList":
                resources.extend(_aggregated_resources(listing))
            elif root == "/api":
                for version in listing.get("versions", ["v1"])[:1]:
                    resources.extend(await self._resources("", version, api_path(group="", version=version)))
            else:
                resources.extend(await self._group_resources(listing))
        return resources

    async def _group_resources(self, groups: Mapping[str, Any]) -> list[ApiResource]:
        resources: list[ApiResource] = []
        for group in groups.get("groups", []):
            name = group.get("name")
            preferred = (group.get("preferredVersion") or {}).get("version")
            if not preferred or not name:
                continue
            others = [str(v.get("version")) for v in group.get("versions") or [] if v.get("version") != preferred]
            found: list[ApiResource] = []
            for version in [preferred, *others]:
                try:
                    found.extend(await self._resources(name, version, api_path(group=name, version=version)))
                except KubeError as exc:  # an aggregated API that is down must not hide everything else
                    logger.warning("Skipped an unavailable API group group=%s version=%s error=%s", name, version, exc)
                    if version == preferred:
                        break
            resources.extend(_each_once(found, preferred=preferred))
        return resources

    async def _resources(self, group: str, version: str, path: str) -> list[ApiResource]:
        listing = await self.get(path)
        out = []
        for item in listing.get("resources", []):
            if "/" in item.get("name", ""):
                continue
            out.append(
                ApiResource(
                    ref=ResourceRef(group=group, version=version, plural=item["name"], kind=item["kind"]),
                    namespaced=bool(item.get("namespaced")),
                    verbs=tuple(item.get("verbs") or ()),
                    short_names=tuple(item.get("shortNames") or ()),
                    categories=tuple(item.get("categories") or ()),
                )
            )
        return out

    async def list_objects(self, resource: ApiResource, *, namespace: str | None = None) -> list[Body]:
        """Every object of a resource, all pages (raises on any failure: callers never act on partial lists)."""
        items: list[Body] = []
        async for page in self.iter_pages(resource, namespace=namespace):
            items.extend(page)
        return items

    async def iter_pages(
        self,
        resource: ApiResource,
        *,
        namespace: str | None = None,
        page_size: int | None = None,
        metadata_only: bool = False,
    ) -> AsyncIterator[list[Body]]:
        """The objects of a resource a page at a time, so a caller can drop each page's bodies.

        ``metadata_only`` asks for PartialObjectMetadata (name, uid, generation...; no spec or
        status): a few hundred bytes per CRD instead of up to megabytes. A failure on any page
        raises: whoever builds from the pages must discard what it built.
        """
        path = resource.list_path(namespace)
        accept = METADATA_ONLY if metadata_only else "application/json"
        token: str | None = None
        while True:
            query: dict[str, Any] = {"limit": page_size or self._page_size}
            if token:
                query["continue"] = token
            page = await self.get(path, query=query, accept=accept)
            # null, not [], in an empty metadata-only list; no loop variable keeps a body after the page
            items = [_listed(item, resource, metadata_only=metadata_only) for item in page.get("items") or []]
            token = (page.get("metadata") or {}).get("continue")  # ListMeta
            del page
            yield items
            del items  # before the next page is fetched and decoded: one page's bodies at a time, not two
            if not token:
                return

    async def openapi_hashes(self) -> dict[tuple[str, str], str]:
        """Each group-version's schema hash from the ``/openapi/v3`` index (the ``hash`` of its URL).

        The API server changes it when that group-version's schema changes (an upgrade), so a
        built-in kind whose hash is the one it was described with need not be fetched again.
        """
        index = await self.get("/openapi/v3")
        out: dict[tuple[str, str], str] = {}
        for key, entry in ((index or {}).get("paths") or {}).items():
            url = str((entry or {}).get("serverRelativeURL") or "")
            found = [part.split("=", 1)[1] for part in url.partition("?")[2].split("&") if part.startswith("hash=")]
            parts = str(key).split("/")
            if found and parts[0] == "api" and len(parts) == 2:
                out[("", parts[1])] = found[0]
            elif found and parts[0] == "apis" and len(parts) == 3:
                out[(parts[1], parts[2])] = found[0]
        return out

    async def openapi_components(self, group: str, version: str) -> Mapping[str, Any]:
        """``components.schemas`` of one group-version from ``/openapi/v3`` (empty if unavailable)."""
        index = await self.get("/openapi/v3")
        key = f"apis/{group}/{version}" if group else f"api/{version}"
        entry = (index.get("paths") or {}).get(key)
        if not entry:
            return {}
        url = entry.get("serverRelativeURL") or f"/openapi/v3/{key}"
        path, _, query = url.partition("?")
        params = dict(part.split("=", 1) for part in query.split("&") if "=" in part)
        document = await self.get(path, query=params)
        return ((document or {}).get("components") or {}).get("schemas") or {}

    async def post(self, path: str, body: Mapping[str, Any]) -> Any:
        """Create a review object (TokenReview, SubjectAccessReview): nothing is stored by the API server."""
        return await asyncio.to_thread(
            self._request, "POST", path, body=dict(body), content_type="application/json", timeout=10
        )

    async def patch_status(
        self, *, group: str, version: str, plural: str, name: str, status: Mapping[str, Any]
    ) -> None:
        """Merge-patch the status subresource of one of *our* cluster-scoped objects (SyncPolicy)."""

        await asyncio.to_thread(
            self._request,
            "PATCH",
            api_path(group=group, version=version, plural=plural, name=name, subresource="status"),
            body={"status": dict(status)},
            content_type="application/merge-patch+json",
        )


def _listed(item: dict[str, Any], resource: ApiResource, *, metadata_only: bool) -> Body:
    """A listed item as a body: list items leave out their ``apiVersion`` and ``kind``."""
    if not metadata_only:
        item.setdefault("apiVersion", resource.ref.api_version)
        item.setdefault("kind", resource.ref.kind)
    return as_body(item)


def _each_once(resources: list[ApiResource], *, preferred: str) -> list[ApiResource]:
    """One ApiResource per plural, at the version ``controller/kube/versions.py`` chooses."""
    by_plural: dict[str, list[tuple[str, ApiResource]]] = {}
    for resource in resources:
        by_plural.setdefault(resource.ref.plural, []).append((resource.ref.version, resource))
    picked = (chosen(candidates, preferred=preferred) for candidates in by_plural.values())
    return [pair[1] for pair in picked if pair is not None]


def _aggregated_resources(listing: Mapping[str, Any]) -> list[ApiResource]:
    """The resources of an ``APIGroupDiscoveryList``: each group's first version is its preferred one.

    A version whose aggregated API is down says ``freshness: Stale`` and may list nothing or an
    old set; it is skipped with a warning, as a group that answers 503 is with plain discovery
    (the whole group when its preferred version is stale).
    """
    out: list[ApiResource] = []
    for group in listing.get("items") or []:
        name = (group.get("metadata") or {}).get("name") or ""
        versions = group.get("versions") or []
        if not versions:
            continue
        if versions[0].get("freshness") == "Stale":
            logger.warning("Skipped an unavailable API group group=%s error=stale discovery", name)
            continue
        found: list[ApiResource] = []
        for version in versions:
            if version.get("freshness") == "Stale":
                logger.warning(
                    "Skipped an unavailable API group group=%s version=%s error=stale discovery",
                    name,
                    version.get("version"),
                )
                continue
            for item in version.get("resources") or []:
                kind = (item.get("responseKind") or {}).get("kind")
                if not kind or not item.get("resource") or not version.get("version"):
                    continue
                found.append(
                    ApiResource(
                        ref=ResourceRef(group=name, version=version["version"], plural=item["resource"], kind=kind),
                        namespaced=item.get("scope") == "Namespaced",
                        verbs=tuple(item.get("verbs") or ()),
                        short_names=tuple(item.get("shortNames") or ()),
                        categories=tuple(item.get("categories") or ()),
                    )
                )
        out.extend(_each_once(found, preferred=str(versions[0].get("version"))))
    return out
