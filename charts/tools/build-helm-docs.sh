#!/usr/bin/env bash
# Builds helm-docs (the chart README from values.yaml comments) from the Go module proxy into
# ~/.cache/kubevec/helm-docs/<version>/ and reuses it. Prints the binary's path as its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/helm-docs" && pwd)"
cd "$here"
version="$(awk '$1 == "github.com/norwoodj/helm-docs" {print $2}' go.mod)"
cache_root="${KUBEVEC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevec}"
out="$cache_root/helm-docs/$version"
if [[ ! -x "$out/helm-docs" ]]; then
  mkdir -p "$out"
  echo "Building helm-docs $version (about 150 packages)" >&2
  start=$SECONDS
  CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false" \
    go build -trimpath -ldflags "-s -w" -o "$out/helm-docs.tmp" github.com/norwoodj/helm-docs/cmd/helm-docs >&2
  [[ -x "$out/helm-docs.tmp" ]] || { echo "Failed to build helm-docs" >&2; exit 1; }
  mv "$out/helm-docs.tmp" "$out/helm-docs"
  echo "Built helm-docs in $((SECONDS - start))s" >&2
fi
echo "$out/helm-docs"
