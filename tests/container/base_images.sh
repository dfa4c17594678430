#!/usr/bin/env bash
# Makes the Debian 12 images the Dockerfile builds FROM (debian:12 and
# debian:12-slim) without a registry: a minimal root from Debian's mirror
# (debootstrap --variant=minbase bookworm), trimmed the way Debian's slim
# images are (no apt lists or caches, no documentation, manuals or
# translations, and dpkg told not to install them later), imported into
# podman under both names.
#
# The root is cached as a tarball, so only the first run pays for
# debootstrap (about a minute); later runs import it in seconds, and a run
# finding both images already in podman's store does nothing.
#
#   tests/container/base_images.sh [--refresh]
#
# Environment: UTILITYD_CACHE_DIR (default ~/.cache/utilityd), CONTAINERS_CONF
# as the caller set it, DEBIAN_MIRROR and DEBIAN_SECURITY_MIRROR (default:
# the ones this machine's own apt sources use for bookworm and
# bookworm-security, so the images fetch from where the host does).
set -euo pipefail

# Prints the first URI this machine's apt sources give for suite $1, in
# either format (deb822 .sources stanzas, or one-line "deb URI suite ...").
apt_source_for() {
  local suite=$1 f
  for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
           /etc/apt/sources.list.d/*.sources; do
    [ -r "$f" ] || continue
    case $f in
      *.sources)
        awk -v want="$suite" 'BEGIN { RS = ""; FS = "\n" }
          { uris = ""; suites = ""; on = 1
            for (i = 1; i <= NF; i++) {
              line = $i
              if (line ~ /^URIs:/) { sub(/^URIs:[ \t]*/, "", line); uris = line }
              if (line ~ /^Suites:/) { sub(/^Suites:[ \t]*/, "", line); suites = " " line " " }
              if (line ~ /^Enabled:[ \t]*no/) on = 0
            }
            if (on && uris != "" && index(suites, " " want " ")) {
              split(uris, u, " "); print u[1]; exit
            } }' "$f"
        ;;
      *)
        awk -v want="$suite" '$1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while ($i !~ /\]$/) i++; i++ }
            if ($(i + 1) == want) { print $i; exit } }' "$f"
        ;;
    esac
  done | head -1
}

refresh=false
[ "${1:-}" = --refresh ] && refresh=true

cache=${UTILITYD_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/utilityd}
tarball=$cache/debian-12-minbase.tar
mirror=${DEBIAN_MIRROR:-$(apt_source_for bookworm)}
security=${DEBIAN_SECURITY_MIRROR:-$(apt_source_for bookworm-security)}
label=org.utilityd.base-image=debian-12-minbase
names=(docker.io/library/debian:12 docker.io/library/debian:12-slim)

ours() {  # is this name in podman's store, and made by this script?
  [ "$(podman image inspect --format '{{index .Labels "org.utilityd.base-image"}}' \
        "$1" 2>/dev/null)" = debian-12-minbase ]
}

if ! $refresh; then
  all=true
  for n in "${names[@]}"; do ours "$n" || all=false; done
  if $all; then
    echo "base images: ${names[*]} already in podman's store"
    exit 0
  fi
fi

for n in "${names[@]}"; do
  if podman image exists "$n" && ! ours "$n"; then
    echo "base images: $n exists and was not made by this script; leaving it" >&2
    echo "  (remove it with 'podman rmi $n' to let the test make its own)" >&2
    exit 1
  fi
done

if $refresh || [ ! -s "$tarball" ]; then
  if [ -z "$mirror" ]; then
    echo "base images: no Debian bookworm mirror in this machine's apt sources;" \
         "set DEBIAN_MIRROR" >&2
    exit 1
  fi
  mkdir -p "$cache"
  root=$(mktemp -d "$cache/rootfs.XXXXXX")
  trap 'rm -rf "$root"' EXIT
  echo "base images: debootstrap --variant=minbase bookworm from $mirror"
  start=$(date +%s)
  if ! debootstrap --variant=minbase bookworm "$root" "$mirror" \
         >"$cache/debootstrap.log" 2>&1; then
    tail -20 "$cache/debootstrap.log" >&2
    echo "base images: debootstrap failed (log: $cache/debootstrap.log)" >&2
    exit 1
  fi
  {
    echo "deb $mirror bookworm main"
    echo "deb $mirror bookworm-updates main"
    [ -z "$security" ] || echo "deb $security bookworm-security main"
  } >"$root/etc/apt/sources.list"
  # What Debian's slim images leave out, now and in later apt-get installs.
  cat >"$root/etc/dpkg/dpkg.cfg.d/slim" <<'EOF'
path-exclude /usr/share/doc/*
path-include /usr/share/doc/*/copyright
path-exclude /usr/share/man/*
path-exclude /usr/share/info/*
path-exclude /usr/share/locale/*
path-exclude /usr/share/lintian/*
EOF
  cat >"$root/etc/apt/apt.conf.d/docker-clean" <<'EOF'
DPkg::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
APT::Update::Post-Invoke { "rm -f /var/cache/apt/archives/*.deb /var/cache/apt/*.bin || true"; };
Binary::apt::APT::Keep-Downloaded-Packages "false";
EOF
  find "$root/usr/share/doc" -mindepth 2 ! -name copyright ! -type d -delete
  rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin \
         "$root"/var/cache/apt/archives/*.deb "$root"/usr/share/man/* \
         "$root"/usr/share/info/* "$root"/usr/share/locale/* \
         "$root"/var/log/*.log "$root"/var/log/apt/*
  tar -C "$root" --numeric-owner -cf "$tarball.tmp" .
  mv "$tarball.tmp" "$tarball"
  echo "base images: root made in $(( $(date +%s) - start )) s," \
       "$(du -m "$tarball" | cut -f1) MB, cached at $tarball"
fi

podman import --change "LABEL $label" --change 'CMD ["bash"]' \
  "$tarball" "${names[0]}" >/dev/null
for n in "${names[@]:1}"; do podman tag "${names[0]}" "$n"; done
echo "base images: ${names[*]} imported from $tarball"
