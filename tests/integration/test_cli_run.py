"""`kubevec run` without a usable cluster: one clear line and a non-zero exit, never a retry loop."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.controlplane.cluster import free_port

pytestmark = pytest.mark.integration
KUBEVEC = str(Path(sys.executable).with_name("kubevec"))


def run(tmp_path: Path, kubeconfig: Path, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        **extra,
        "KUBECONFIG": str(kubeconfig),
        "KUBEVEC_STORE__PATH": str(tmp_path / "store"),
        "KUBEVEC_SERVER__HEALTH_PORT": "0",
        "KUBEVEC_SERVER__METRICS_PORT": "0",
    }
    env.pop("KUBERNETES_SERVICE_HOST", None)
    return subprocess.run([KUBEVEC, "run"], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_no_kubeconfig_is_one_line(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "missing-kubeconfig")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert result.stderr.startswith("kubevec run: Cannot authenticate: not in a pod, and no usable kubeconfig")


def test_unreachable_api_server_is_one_line(tmp_path: Path) -> None:
    port = free_port()
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        f"""apiVersion: v1
kind: Config
clusters: [{{name: c, cluster: {{server: "https://127.0.0.1:{port}"}}}}]
contexts: [{{name: c, context: {{cluster: c, user: u}}}}]
current-context: c
users: [{{name: u, user: {{token: abc}}}}]
"""
    )
    result = run(tmp_path, kubeconfig)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        f"kubevec run: cannot reach the Kubernetes API at https://127.0.0.1:{port}: Connection refused"
    )


def test_an_open_mcp_port_without_a_token_is_refused(tmp_path: Path) -> None:
    result = run(tmp_path, tmp_path / "missing-kubeconfig", KUBEVEC_MCP_PORT="8765", KUBEVEC_SERVER__HOST="0.0.0.0")
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0, result.stderr
    assert result.stderr.startswith("kubevec run: refusing to serve MCP on 0.0.0.0:8765 without authentication")


def test_shell_completion_completes_commands_flags_and_choices() -> None:
    """issue 31: no completion was offered; it is generated from the parser, so new flags complete too."""
    import shutil

    bash = shutil.which("bash")
    assert bash is not None
    kubevec = str(Path(sys.executable).with_name("kubevec"))
    script = subprocess.run([kubevec, "completion", "bash"], capture_output=True, text=True, check=True).stdout

    def complete(*words: str) -> set[str]:
        line = " ".join(["kubevec", *words])
        probe = (
            f"{script}\nCOMP_WORDS=({line}); COMP_CWORD={len(words)}; _kubevec; printf '%s\\n' \"${{COMPREPLY[@]}}\""
        )
        done = subprocess.run([bash, "-c", probe], capture_output=True, text=True, check=True)
        return set(done.stdout.split())

    assert {"search", "status"} <= complete("s")
    assert {"--collection", "--kind"} <= complete("search", "--")
    assert complete("search", "--collection", "") == {"capabilities", "instances"}
    assert complete("status", "--kube") == {"--kubeconfig"}  # global flags after the command too
    assert "zsh" in subprocess.run([kubevec, "completion", "zsh"], capture_output=True, text=True, check=True).stdout
