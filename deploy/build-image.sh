#!/usr/bin/env bash
# Builds the kubevec image from deploy/Dockerfile with buildah (no daemon: vfs storage, chroot isolation),
# then runs `kubevec --version` inside it.
#
#   deploy/build-image.sh [--debootstrap] [--tag TAG]
#
# --debootstrap  make the base image from Debian packages with mmdebstrap (python3, python3-venv,
#                ca-certificates) instead of pulling BASE_IMAGE from a registry; it is passed to the
#                build pinned by its digest.
# PIP_CERT       a CA bundle handed to pip as a build secret (builds behind a TLS-intercepting proxy);
#                it never reaches the image.
# On a machine with Docker: docker build -f deploy/Dockerfile -t kubevec . does the same.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
tag="localhost/kubevec:$(python3 -c 'import tomllib; print(tomllib.load(open("pyproject.toml","rb"))["project"]["version"])')"
debootstrap=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --debootstrap) debootstrap=true ;;
    --tag) tag="$2"; shift ;;
    *) echo "usage: $0 [--debootstrap] [--tag TAG]" >&2; exit 2 ;;
  esac
  shift
done
export STORAGE_DRIVER="${STORAGE_DRIVER:-vfs}" BUILDAH_ISOLATION="${BUILDAH_ISOLATION:-chroot}"
args=(--build-arg "REVISION=$(git rev-parse --short HEAD 2>/dev/null || echo unknown)")
if [[ "$debootstrap" == true ]]; then
  work="$(mktemp -d)"
  trap 'rm -rf "$work"' EXIT
  echo "Making a Debian bookworm base with mmdebstrap" >&2
  mmdebstrap --variant=minbase --include=python3,python3-venv,ca-certificates --quiet \
    bookworm "$work/base.tar" "${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
  ctr="$(buildah from scratch)"
  buildah add --quiet "$ctr" "$work/base.tar" / >/dev/null
  buildah config --env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin "$ctr"
  buildah commit --quiet --rm "$ctr" localhost/kubevec-base:bookworm >/dev/null
  digest="$(buildah images --digests --format '{{.Digest}}' localhost/kubevec-base:bookworm | head -1)"
  args+=(--build-arg "BASE_IMAGE=localhost/kubevec-base@${digest}")
  echo "Base image localhost/kubevec-base@${digest}" >&2
fi
if [[ -n "${PIP_CERT:-}" && -f "${PIP_CERT}" ]]; then
  args+=(--secret "id=pip-cert,src=${PIP_CERT}")
fi
echo "Building $tag" >&2
buildah build --layers -f deploy/Dockerfile "${args[@]}" -t "$tag" .
ctr="$(buildah from "$tag")"
trap 'buildah rm "$ctr" >/dev/null 2>&1 || true; rm -rf "${work:-/nonexistent}"' EXIT
buildah run "$ctr" -- kubevec --version
buildah inspect --format '{{.OCIv1.Config.User}} {{index .OCIv1.Config.Labels "org.opencontainers.image.title"}}' "$tag"
