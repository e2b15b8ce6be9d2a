"""What must never reach a document or a log, removed before anything else looks at an object.

Absolute rules: Secret ``data``/``stringData`` values, ConfigMap ``data``/``binaryData`` values,
``kubectl.kubernetes.io/last-applied-configuration``, ``managedFields``, and anything that looks
like a credential (fields named like tokens/passwords/keys, PEM blocks, JWTs) are dropped. Key
*names* of Secrets and ConfigMaps survive (as lists) because they say what an object holds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final

LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
#: Annotations that carry whole object copies or credentials.
DROPPED_ANNOTATIONS: Final = frozenset(
    {
        LAST_APPLIED,
        "kubernetes.io/service-account.uid",
        "openshift.io/token-secret.value",
        "deployment.kubernetes.io/revision",  # churns on every rollout; says nothing
    }
)
_CREDENTIAL_NAME = re.compile(
    r"(password|passwd|passphrase|token|apikey|api_key|api-key|secretkey|secret_key|privatekey|private_key|"
    r"credentials?|bearer|authorization|kubeconfig)$",
    re.IGNORECASE,
)
_CREDENTIAL_VALUE = re.compile(r"-----BEGIN [A-Z ]*(PRIVATE KEY|CERTIFICATE)-----|^eyJ[\w-]+\.[\w-]+\.[\w-]*$")
REDACTED: Final = "<redacted>"


def is_credential_name(name: str) -> bool:
    return bool(_CREDENTIAL_NAME.search(name))


def is_credential_value(value: str) -> bool:
    return bool(_CREDENTIAL_VALUE.search(value.strip()))


def redact_object(obj: Mapping[str, Any]) -> dict[str, Any]:
    """A copy of ``obj`` with every secret-bearing part removed (key names of Secret/ConfigMap kept)."""
    kind = str(obj.get("kind", ""))
    out: dict[str, Any] = {}
    for key, value in obj.items():
        if key == "metadata" and isinstance(value, Mapping):
            out[key] = _redact_metadata(value)
        elif kind in ("Secret", "ConfigMap") and key in ("data", "stringData", "binaryData"):
            if isinstance(value, Mapping):
                out.setdefault("_keys", []).extend(sorted(str(k) for k in value))
        else:
            out[key] = _scrub(value)
    if "_keys" in out:
        out["_keys"] = sorted(set(out["_keys"]))
    return out


def _redact_metadata(metadata: Mapping[str, Any]) -> dict[str, Any]:
    out = {k: v for k, v in metadata.items() if k != "managedFields"}
    annotations = metadata.get("annotations")
    if isinstance(annotations, Mapping):
        out["annotations"] = {
            str(k): v
            for k, v in annotations.items()
            if k not in DROPPED_ANNOTATIONS
            and not is_credential_name(str(k))
            and not (isinstance(v, str) and is_credential_value(v))
        }
    return out


def _scrub(value: Any) -> Any:
    if isinstance(value, Mapping):
        return {
            k: (REDACTED if is_credential_name(str(k)) and isinstance(v, str | bytes) else _scrub(v))
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_scrub(item) for item in value]
    if isinstance(value, str) and is_credential_value(value):
        return REDACTED
    return value
