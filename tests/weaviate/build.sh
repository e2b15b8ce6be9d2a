#!/usr/bin/env bash
# Builds the real Weaviate server from the Go module proxy into ~/.cache/kubevec/weaviate/<version>/
# and reuses it when present. Prints the directory holding the binary as its last line.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

version="$(awk '$1 == "require" && $2 == "github.com/weaviate/weaviate" {print $3} $1 == "github.com/weaviate/weaviate" {print $2}' go.mod | head -1)"
if [[ -z "$version" ]]; then
  echo "No github.com/weaviate/weaviate version in go.mod" >&2
  exit 1
fi
cache_root="${KUBEVEC_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/kubevec}"
out="$cache_root/weaviate/$version"
mkdir -p "$out"
export CGO_ENABLED=0 GOFLAGS="${GOFLAGS:-} -mod=mod -buildvcs=false"

if [[ -x "$out/weaviate-server" ]]; then
  echo "Reused weaviate-server from $out" >&2
else
  echo "Building weaviate-server $version (a cold build compiles ~1500 packages; progress every 100)" >&2
  start=$SECONDS
  go build -v -trimpath -ldflags "-s -w" -o "$out/weaviate-server.tmp" github.com/weaviate/weaviate/cmd/weaviate-server 2>&1 \
    | awk '/^#|: / {print; next} {n++; if (n % 100 == 0) {printf "  weaviate-server: compiled %d packages\n", n; fflush()}}' >&2
  if [[ ! -x "$out/weaviate-server.tmp" ]]; then
    echo "Failed to build weaviate-server" >&2
    exit 1
  fi
  mv "$out/weaviate-server.tmp" "$out/weaviate-server"
  echo "Built weaviate-server in $((SECONDS - start))s" >&2
fi
echo "$out"
