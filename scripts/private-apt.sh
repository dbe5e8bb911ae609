# shellcheck shell=sh disable=SC2154 # prefix, log, cannot_install and refuse come from the caller
# Sourced by the test fixtures (scripts/lavapipe26-fixture, scripts/vulkan-validation-fixture):
# packages of Debian's later suites unpacked into a private prefix on Debian 12, nothing installed
# system-wide, the system's apt sources and state untouched, root not needed. The caller defines
# log, cannot_install (exit 77) and refuse (exit 1), and sets `prefix` (absolute).

# Debian 12 amd64 with the tools, and a keyring with trixie's archive keys.
private_apt_check() {
  codename=$(. /etc/os-release && echo "${VERSION_CODENAME:-}")
  [ "$codename" = bookworm ] || cannot_install "made for Debian 12 (bookworm), this is '${codename:-unknown}'"
  for tool in apt-get dpkg dpkg-deb dpkg-query cc ldd; do
    command -v "$tool" >/dev/null 2>&1 || cannot_install "$tool is missing (scripts/setup-debian installs it)"
  done
  [ "$(dpkg --print-architecture)" = amd64 ] || cannot_install "made for amd64, this is $(dpkg --print-architecture)"
  keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  keyring_version=$(dpkg-query -W -f='${Version}' debian-archive-keyring 2>/dev/null || true)
  # 2023.3+deb12u2 (Debian 12.11) is the first bookworm keyring with trixie's archive keys.
  if [ ! -f "$keyring" ] || ! dpkg --compare-versions "${keyring_version:-0}" ge 2023.3+deb12u2; then
    cannot_install "debian-archive-keyring ${keyring_version:-(none)} lacks trixie's keys: 2023.3+deb12u2 or later is needed (apt-get install debian-archive-keyring)"
  fi
}

# private_apt SUITE...: a private apt configuration in $prefix/apt reading the Debian mirror of the
# system's sources for these suites (signed by the installed debian-archive-keyring), exported as
# APT_CONFIG (/etc/apt/apt.conf.d is still read: proxies and the like apply), and its lists updated.
# A failed update is not final: lists and packages of an earlier run still serve.
private_apt() {
  mirror=$(apt-get indextargets --format '$(REPO_URI)' 'Release: bookworm' 'Identifier: Packages' 2>/dev/null | head -n1)
  [ -n "$mirror" ] || cannot_install "the system's apt sources name no Debian bookworm mirror"
  apt="$prefix/apt"
  mkdir -p "$apt/lists/partial" "$apt/archives/partial" "$apt/sources.list.d" "$apt/preferences.d"
  touch "$apt/status"
  : >"$apt/sources.list"
  for suite in "$@"; do echo "deb [signed-by=$keyring] $mirror $suite main" >>"$apt/sources.list"; done
  cat >"$apt/apt.conf" <<CONF
Dir::State "$apt";
Dir::State::lists "$apt/lists";
Dir::State::status "$apt/status";
Dir::Cache "$apt";
Dir::Cache::archives "$apt/archives";
Dir::Etc::sourcelist "$apt/sources.list";
Dir::Etc::sourceparts "$apt/sources.list.d";
Dir::Etc::preferencesparts "$apt/preferences.d";
APT::Architecture "amd64";
APT::Architectures { "amd64"; };
Acquire::Languages "none";
CONF
  # As root, apt downloads as the user _apt, which cannot write into the prefix.
  [ "$(id -u)" -ne 0 ] || echo 'APT::Sandbox::User "root";' >>"$apt/apt.conf"
  export APT_CONFIG="$apt/apt.conf"
  log "reading $mirror ($*) into $apt"
  apt-get -q update >&2 || log "apt-get update failed: using what an earlier run downloaded, if anything"
}

# private_unpack ROOT PACKAGE/SUITE...: downloads the packages into $prefix/debs (apt-get download
# keeps files already there with the right hash; those of earlier versions go) and unpacks them into
# ROOT, emptied first.
private_unpack() {
  root=$1
  shift
  debs="$prefix/debs"
  rm -rf "$apt/uris"
  mkdir -p "$debs" "$apt/uris"
  # --print-uris lists only the files missing from the current directory: an empty one.
  uris=$(cd "$apt/uris" && apt-get download --print-uris "$@" 2>&1) ||
    cannot_install "apt finds no $* (no network, or not served): $(printf '%s' "$uris" | tr '\n' ' ')"
  files=$(printf '%s\n' "$uris" | awk '/^'"'"'/ { printf "%s ", $2 }')
  (cd "$debs" && apt-get -q download "$@" >&2) || cannot_install "cannot download $* (apt's messages above)"
  for f in "$debs"/*.deb; do
    case " $files" in *" ${f##*/} "*) ;; *) rm -f "$f" ;; esac
  done
  rm -rf "$root"
  mkdir -p "$root"
  for f in $files; do
    log "unpacking $f"
    dpkg-deb -x "$debs/$f" "$root"
  done
}
