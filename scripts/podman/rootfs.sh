# Shared by runner/images/build and scripts/podman/build-postgis-image: build a Debian bookworm
# root filesystem with mmdebstrap (Debian's packages only, no container registry) and import it
# into podman with a label holding the hash of its inputs, so unchanged images are not rebuilt.
# Source this file; it defines functions only.

MIRROR="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
SECURITY_MIRROR="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
IMAGE_BUILD_DIR="${IMAGE_BUILD_DIR:-/var/tmp/chronomap-image-build}"
INPUTS_LABEL=org.chronomap.inputs

# image_inputs_label IMAGE: the inputs hash the image was built from, empty when there is none.
image_inputs_label() {
  podman image inspect "$1" --format "{{ index .Labels \"$INPUTS_LABEL\" }}" 2>/dev/null || true
}

# make_rootfs DIR PACKAGES(comma separated)
make_rootfs() {
  local rootfs="$1" packages="$2"
  # essential variant + --include: apt runs from outside, so neither apt nor its keys end up
  # in the image. Docs, man pages and translations are left out to keep it small.
  mmdebstrap --quiet --variant=essential --include="$packages" \
    --aptopt='APT::Install-Recommends "false"' \
    --dpkgopt='path-exclude=/usr/share/doc/*' --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/locale/*' \
    --dpkgopt='path-exclude=/usr/share/info/*' \
    bookworm "$rootfs" \
    "deb $MIRROR bookworm main" "deb $MIRROR bookworm-updates main" "deb $SECURITY_MIRROR bookworm-security main"
}

# import_rootfs DIR IMAGE HASH [--change ...]: tars DIR into podman as IMAGE, labelled with HASH.
import_rootfs() {
  local rootfs="$1" image="$2" hash="$3" previous
  shift 3
  previous="$(podman image inspect "$image" --format '{{.Id}}' 2>/dev/null || true)"
  tar -C "$rootfs" --numeric-owner -cf - . |
    podman import --quiet "$@" --change "LABEL $INPUTS_LABEL=$hash" - "$image" >/dev/null
  # The image the tag pointed at before is now untagged: remove it (if nothing uses it) so
  # rebuilds do not pile up hundreds of MB each.
  if [ -n "$previous" ] && [ "$previous" != "$(podman image inspect "$image" --format '{{.Id}}')" ]; then
    podman rmi "$previous" >/dev/null 2>&1 || true
  fi
}
