#!/usr/bin/env bash
# Builds helm from the Go module proxy into ~/.cache/kubevec/helm/<version>/ and reuses it.
# Prints the path of the helm binary as its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
version="$(awk '$1 == "helm.sh/helm/v3" {print $2}' go.mod)"
cache_root="${KUBEVEC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevec}"
out="$cache_root/helm/$version"
if [[ ! -x "$out/helm" ]]; then
  mkdir -p "$out"
  echo "Building helm $version (a cold build compiles ~600 packages; progress every 100)" >&2
  start=$SECONDS
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false" \
    go build -v -trimpath -ldflags "-s -w -X helm.sh/helm/v3/internal/version.version=$version" \
      -o "$out/helm.tmp" helm.sh/helm/v3/cmd/helm 2>&1 \
    | awk '/^#|: / {print; next} {n++; if (n % 100 == 0) {printf "  helm: compiled %d packages\n", n; fflush()}}' >&2
  [[ -x "$out/helm.tmp" ]] || { echo "Failed to build helm" >&2; exit 1; }
  mv "$out/helm.tmp" "$out/helm"
  echo "Built helm in $((SECONDS - start))s" >&2
fi
echo "$out/helm"
