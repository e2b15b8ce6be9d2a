#!/usr/bin/env bash
# Builds the real control plane (etcd, kube-apiserver, kube-controller-manager, kubectl)
# from the Go module proxy into ~/.cache/kubevec/k8s/<version>/ and reuses it when present.
# Prints the directory holding the binaries as its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

k8s_version="$(awk '$1 == "k8s.io/kubernetes" {print $2}' go.mod)"
etcd_version="$(awk '$1 == "go.etcd.io/etcd/server/v3" {print $2}' go.mod)"
cache_root="${KUBEVEC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevec}"
out="$cache_root/k8s/$k8s_version"
mkdir -p "$out"

minor="${k8s_version#v1.}"; minor="${minor%%.*}"
ldflags="-s -w \
 -X k8s.io/component-base/version.gitVersion=$k8s_version \
 -X k8s.io/component-base/version.gitMajor=1 \
 -X k8s.io/component-base/version.gitMinor=$minor \
 -X k8s.io/component-base/version.gitTreeState=clean \
 -X k8s.io/client-go/pkg/version.gitVersion=$k8s_version \
 -X k8s.io/client-go/pkg/version.gitMajor=1 \
 -X k8s.io/client-go/pkg/version.gitMinor=$minor"

export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"

build() {
  local name="$1" pkg="$2"
  if [[ -x "$out/$name" ]]; then
    echo "Reused $name from $out" >&2
    return
  fi
  echo "Building $name from $pkg (a cold build compiles ~1500-3000 packages; progress every 100)" >&2
  local start=$SECONDS
  # `go build -v` names each package as it is compiled: count them for progress.
  go build -v -trimpath -ldflags "$ldflags" -o "$out/$name.tmp" "$pkg" 2>&1 \
    | awk -v name="$name" '/^#|: / {print; next} {n++; if (n % 100 == 0) {printf "  %s: compiled %d packages\n", name, n; fflush()}}' >&2
  if [[ ! -x "$out/$name.tmp" ]]; then
    echo "Failed to build $name" >&2
    exit 1
  fi
  mv "$out/$name.tmp" "$out/$name"
  echo "Built $name in $((SECONDS - start))s" >&2
}

build etcd go.etcd.io/etcd/server/v3
build kube-apiserver k8s.io/kubernetes/cmd/kube-apiserver
build kubectl k8s.io/kubernetes/cmd/kubectl
build kube-controller-manager k8s.io/kubernetes/cmd/kube-controller-manager
echo "k8s=$k8s_version etcd=$etcd_version" > "$out/VERSIONS"
echo "$out"
