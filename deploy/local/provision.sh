#!/usr/bin/env bash
# Installs what the local stack needs on Debian or Ubuntu, and nothing when it is all there:
#   - a PostgreSQL server (the distribution's `postgresql`) unless initdb/pg_ctl are found;
#   - pgvector for that server: the distribution's postgresql-NN-pgvector where it exists,
#     otherwise built from Debian's `pgvector` source package against that server (adding a
#     deb-src entry for a suite that has it, trixie, only when apt knows no pgvector source);
#   - nats-server (JetStream), 2.10 or newer: the distribution's where it is that new, otherwise
#     Debian trixie's (adding a `deb` entry for trixie pinned to nats-server alone); 2.9 serves
#     each consumer one subject filter, so every service would read every event of an import.
# Non-interactive (never reads stdin), idempotent, uses sudo when not root. Quiet when nothing
# is missing; otherwise says what it does.
#
# Usage: deploy/local/provision.sh [--dry-run] [--with-media]
#   --dry-run   print what would be done and change nothing
#   --with-media  also the media tools: ffmpeg, exiftool, tesseract, pocketsphinx, espeak-ng, pdftoppm
#   --with-browser  also Debian's chromium, which the web UI's tests and bench drive headless
#
# Test hooks (libs/stack's provision test): MEMEX_PROVISION_ROOT prefixes the system paths
# looked at (/usr/lib/postgresql, /usr/share/postgresql, /usr/sbin); MEMEX_PROVISION_PATH is
# the PATH used to find pg_config, nats-server, apt-cache and sudo.
set -euo pipefail

DRY_RUN=0
WITH_MEDIA=0
WITH_BROWSER=0
for arg in "$@"; do
  case "$arg" in
    --dry-run) DRY_RUN=1 ;;
    --with-media) WITH_MEDIA=1 ;;
    --with-browser) WITH_BROWSER=1 ;;
    -h | --help) sed -n '2,18p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "provision: unknown option $arg (try --help)" >&2; exit 2 ;;
  esac
done

ROOT="${MEMEX_PROVISION_ROOT:-}"
LOOKUP_PATH="${MEMEX_PROVISION_PATH:-$PATH:/usr/sbin:/usr/local/sbin:/sbin}"
# A suite whose sources have pgvector (0.8.0 there builds against PostgreSQL 13 to 17).
PGVECTOR_SRC_SUITE=trixie
PGVECTOR_SRC_LIST=/etc/apt/sources.list.d/memex-pgvector-src.sources
# A suite whose nats-server is 2.10 or newer (2.10.27; a static Go binary, needing only libc6 2.34).
NATS_SUITE=trixie
NATS_LIST=/etc/apt/sources.list.d/memex-nats.sources
NATS_PIN=/etc/apt/preferences.d/memex-nats

say() { echo "provision: $*"; }
die() { echo "provision: error: $*" >&2; exit 1; }
tool() { PATH="$LOOKUP_PATH" "$@"; }
have() { tool command -v "$1" >/dev/null 2>&1; }
# Run (or, in a dry run, only show) a command that changes the system.
act() {
  if [ "$DRY_RUN" = 1 ]; then say "would run: $*"; else "$@"; fi
}

# --- privileges --------------------------------------------------------------------------
SUDO=()
privileges_checked=0
need_root() {
  [ "$privileges_checked" = 1 ] && return
  privileges_checked=1
  [ "$(id -u)" = 0 ] && return
  SUDO=(sudo)
  [ "$DRY_RUN" = 1 ] && return
  have sudo || die "installing packages needs root: run this as root, or install sudo"
  # sudo may ask for a password on the terminal (never stdin); without one it must not hang.
  if ! tool sudo -n true 2>/dev/null; then
    [ -t 0 ] && [ -t 1 ] || die "installing packages needs root and sudo wants a password with no terminal to ask on: run \`sudo $0\` once"
  fi
}
as_root() { act "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive "$@"; }

# --- apt ---------------------------------------------------------------------------------
apt_updated=0
apt_update() {
  [ "$apt_updated" = 1 ] && return
  need_root
  say "updating the package lists"
  as_root apt-get update -q
  apt_updated=1
}
apt_install() {
  apt_update
  say "installing $*"
  as_root apt-get install -y -q --no-install-recommends \
    -o Dpkg::Options::=--force-confdef -o Dpkg::Options::=--force-confold "$@"
}
# The version apt would install, or nothing when the package is unknown to it.
apt_candidate() {
  tool apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ { if ($2 != "(none)") print $2 }'
}

# --- detection ---------------------------------------------------------------------------
is_server() { [ -n "$1" ] && [ -x "$1/initdb" ] && [ -x "$1/pg_ctl" ] && [ -x "$1/postgres" ]; }
# The bindir of a PostgreSQL server: pg_config's, else the highest Debian /usr/lib/postgresql/NN.
pg_bindir() {
  local dir major
  if have pg_config; then
    dir=$(tool pg_config --bindir 2>/dev/null || true)
    if is_server "$dir"; then echo "$dir"; return; fi
  fi
  for major in $(ls -1 "$ROOT/usr/lib/postgresql" 2>/dev/null | grep -E '^[0-9]+$' | sort -rn); do
    dir="$ROOT/usr/lib/postgresql/$major/bin"
    if is_server "$dir"; then echo "$dir"; return; fi
  done
}
pg_major() { "$1/postgres" --version | sed -nE 's/.*\(PostgreSQL\) ([0-9]+).*/\1/p'; }
pg_sharedir() {
  if [ -x "$1/pg_config" ]; then "$1/pg_config" --sharedir; else echo "$ROOT/usr/share/postgresql/$2"; fi
}
nats_binary() {
  if have nats-server; then tool command -v nats-server; elif [ -x "$ROOT/usr/sbin/nats-server" ]; then echo "$ROOT/usr/sbin/nats-server"; fi
}
has_nats() { [ -n "$(nats_binary)" ]; }
# Whether a version (2.10.27, 2.10.27-1+b2, v2.9.10) is 2.10 or newer.
at_least_2_10() { [[ "$1" =~ ^v?([0-9]+)\.([0-9]+) ]] && { [ "${BASH_REMATCH[1]}" -gt 2 ] || { [ "${BASH_REMATCH[1]}" = 2 ] && [ "${BASH_REMATCH[2]}" -ge 10 ]; }; }; }
nats_version() { "$(nats_binary)" --version 2>/dev/null | sed -nE 's/.*v([0-9][0-9.]*).*/\1/p'; }
nats_current() { has_nats && at_least_2_10 "$(nats_version)"; }

# --- entries for another Debian suite ----------------------------------------------------
# Writes `file`, a deb822 entry (`deb` or `deb-src`) for a Debian suite signed by Debian's archive
# keyring, and any further `path content` pairs; apt's index is read again before the next install.
add_debian_entry() {
  local type=$1 suite=$2 file=$3
  shift 3
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  [ -e "$ROOT$keyring" ] || apt_install debian-archive-keyring
  need_root
  local entry
  entry=$(printf 'Types: %s\nURIs: http://deb.debian.org/debian\nSuites: %s\nComponents: main\nSigned-By: %s' \
    "$type" "$suite" "$keyring")
  set -- "$file" "$entry" "$@"
  if [ "$DRY_RUN" = 1 ]; then
    local paths=()
    while [ $# -gt 0 ]; do paths+=("$1"); shift 2; done
    say "would write $(printf '%s and ' "${paths[@]}" | sed 's/ and $//')"
  else
    while [ $# -gt 0 ]; do printf '%s\n' "$2" | "${SUDO[@]}" tee "$1" >/dev/null; shift 2; done
  fi
  apt_updated=0 # the new entry's index
}

# --- nats-server 2.10 from Debian trixie -------------------------------------------------
# Only nats-server comes from trixie (priority 500, as the release's own; every other trixie
# package at 1: never installed or upgraded unless named with -t trixie).
add_nats_suite() {
  [ -e "$ROOT$NATS_LIST" ] && return
  say "adding a deb entry for Debian $NATS_SUITE, pinned to nats-server alone: $NATS_LIST, $NATS_PIN"
  add_debian_entry deb "$NATS_SUITE" "$NATS_LIST" "$NATS_PIN" \
    "$(printf 'Package: *\nPin: release n=%s\nPin-Priority: 1\n\nPackage: nats-server\nPin: release n=%s\nPin-Priority: 500' \
      "$NATS_SUITE" "$NATS_SUITE")"
}

# --- pgvector from source ----------------------------------------------------------------
build_pgvector() {
  local bindir=$1 major=$2
  if [ -z "$(tool apt-cache showsrc pgvector 2>/dev/null)" ]; then
    say "adding a deb-src entry for Debian $PGVECTOR_SRC_SUITE (pgvector's source package): $PGVECTOR_SRC_LIST"
    add_debian_entry deb-src "$PGVECTOR_SRC_SUITE" "$PGVECTOR_SRC_LIST"
  fi
  apt_install "postgresql-server-dev-$major" build-essential
  say "building pgvector from Debian's source package against PostgreSQL $major ($bindir)"
  if [ "$DRY_RUN" = 1 ]; then
    say "would run: apt-get source pgvector; make PG_CONFIG=$bindir/pg_config; make install"
    return
  fi
  local work
  work=$(mktemp -d)
  # As root, apt-get source downloads as user _apt when that user may write here (else it warns).
  if [ "$(id -u)" = 0 ] && id _apt >/dev/null 2>&1; then chown _apt "$work"; fi
  # shellcheck disable=SC2064 # expand now: $work is local
  trap "rm -rf '$work'" EXIT
  (cd "$work" && apt-get source -q pgvector) || die "apt-get source pgvector failed (is a deb-src entry for $PGVECTOR_SRC_SUITE reachable?)"
  local src
  src=$(find "$work" -mindepth 1 -maxdepth 1 -type d -name 'pgvector-*' | head -n 1)
  [ -n "$src" ] || die "apt-get source pgvector produced no pgvector-* directory in $work"
  # OPTFLAGS empty as in Debian's own build: no -march=native, so the library runs on any CPU.
  make -C "$src" -s PG_CONFIG="$bindir/pg_config" OPTFLAGS= || die "building pgvector in $src failed"
  "${SUDO[@]}" make -C "$src" -s install PG_CONFIG="$bindir/pg_config" OPTFLAGS= || die "installing pgvector failed"
  rm -rf "$work"
  trap - EXIT
}

install_pgvector() {
  local bindir=$1 major=$2
  apt_update
  if [ -n "$(apt_candidate "postgresql-$major-pgvector")" ]; then
    apt_install "postgresql-$major-pgvector"
  else
    build_pgvector "$bindir" "$major"
  fi
}

# --- main --------------------------------------------------------------------------------
missing=()
bindir=$(pg_bindir)
[ -n "$bindir" ] || missing+=(postgresql)
nats_current || missing+=(nats-server)
nats_was_installed=0
has_nats && nats_was_installed=1
# Where the distribution's nats-server is older than 2.10 (Debian 12), trixie's.
nats_from_suite=0
if ! nats_current && ! at_least_2_10 "$(apt_candidate nats-server)"; then nats_from_suite=1; fi
pgvector_missing=0
if [ -z "$bindir" ] || [ ! -e "$(pg_sharedir "$bindir" "$(pg_major "$bindir")")/extension/vector.control" ]; then
  pgvector_missing=1
fi
# Say what changes on this machine before changing it.
if [ "${#missing[@]}" != 0 ] || [ "$pgvector_missing" = 1 ]; then
  say "this machine lacks what the memex needs; installing it changes the system:"
  [ "${#missing[@]}" = 0 ] || say "  - Debian packages: ${missing[*]}"
  has_nats && ! nats_current && say "  - nats-server $(nats_version) is replaced by 2.10 or newer (2.9 makes every service read every event)"
  [ "$nats_from_suite" = 1 ] && say "  - nats-server from Debian $NATS_SUITE: a deb entry for it ($NATS_LIST) pinned to that package alone ($NATS_PIN)"
  if [ "$pgvector_missing" = 1 ]; then
    if [ -n "$bindir" ]; then plan_major=$(pg_major "$bindir"); else plan_major=$(apt_candidate postgresql | sed -nE 's/^([0-9]+).*/\1/p'); fi
    if [ -n "$(apt_candidate "postgresql-$plan_major-pgvector")" ]; then
      say "  - pgvector: the package postgresql-$plan_major-pgvector"
    else
      [ -n "$(tool apt-cache showsrc pgvector 2>/dev/null)" ] ||
        say "  - a deb-src entry for Debian $PGVECTOR_SRC_SUITE (pgvector's source package): $PGVECTOR_SRC_LIST"
      say "  - pgvector built from Debian's source package with postgresql-server-dev-$plan_major and build-essential" \
        "(apt may upgrade PostgreSQL $plan_major to its latest point release to match);" \
        "its vector.so and SQL files are copied into PostgreSQL's directories, outside dpkg"
    fi
  fi
  has_nats || say "  - the nats-server system service Debian enables is disabled again: the memex runs its own" \
    "(MEMEX_KEEP_NATS_SERVICE=1 keeps it)"
  say "  (deploy/local/provision.sh --dry-run lists the exact commands without running them)"
fi
[ "$nats_from_suite" = 1 ] && add_nats_suite
[ "${#missing[@]}" = 0 ] || apt_install "${missing[@]}"
# Debian's package enables and starts a system-wide nats-server on port 4222; nothing here uses it.
if [ "$nats_was_installed" = 0 ] && [ "${MEMEX_KEEP_NATS_SERVICE:-0}" != 1 ] && have systemctl; then
  say "disabling the nats-server system service the package enabled"
  as_root systemctl disable --now nats-server.service || say "could not disable nats-server.service (no systemd here?)"
fi

# The media service: ffprobe/ffmpeg (video and audio), exiftool (RAW previews), tesseract (OCR),
# pocketsphinx with its English model (offline transcripts), espeak-ng (speech its tests record),
# pdftoppm (scanned PDF pages rendered for OCR), cjxl (the JPEG XL its tests recompress photos into).
if [ "$WITH_MEDIA" = 1 ]; then
  media=()
  have ffmpeg || media+=(ffmpeg)
  have exiftool || media+=(libimage-exiftool-perl)
  have tesseract || media+=(tesseract-ocr tesseract-ocr-eng)
  have pocketsphinx_continuous || media+=(pocketsphinx pocketsphinx-en-us)
  have espeak-ng || media+=(espeak-ng)
  have pdftoppm || media+=(poppler-utils)
  have cjxl || media+=(libjxl-tools)
  [ "${#media[@]}" = 0 ] || apt_install "${media[@]}"
fi

if [ "$WITH_BROWSER" = 1 ] && ! have chromium; then apt_install chromium; fi

# notmuch: the ingest tests check mail threading against its threads (skipped without it); with
# the other tools the tests need (bootstrap.sh passes --with-media).
if [ "$WITH_MEDIA" = 1 ] && ! have notmuch; then apt_install notmuch; fi
# mu (maildir-utils): the other peer `npm run bench -- ingest` measures beside notmuch.
if [ "$WITH_MEDIA" = 1 ] && ! have mu; then apt_install maildir-utils; fi
# dovecot: mail-sync's IMAP tests run their own unprivileged IMAP server (skipped without it).
if [ "$WITH_MEDIA" = 1 ] && ! have dovecot; then apt_install dovecot-imapd; fi
# The faces test set: public-domain portraits (NASA's, the U.S. Navy's) and no-face images that
# scikit-image and matplotlib ship as sample data (media's faces test; skipped without them).
if [ "$WITH_MEDIA" = 1 ] && [ ! -f /usr/lib/python3/dist-packages/skimage/data/astronaut.png ]; then apt_install python3-skimage; fi
if [ "$WITH_MEDIA" = 1 ] && [ ! -f /usr/share/matplotlib/mpl-data/sample_data/grace_hopper.jpg ]; then apt_install python-matplotlib-data; fi

if [ "$DRY_RUN" = 1 ] && [ -z "$bindir" ]; then
  # Not installed yet: plan for the version the distribution would install.
  major=$(apt_candidate postgresql | sed -nE 's/^([0-9]+).*/\1/p')
  [ -n "$major" ] || die "apt knows no postgresql package (after apt-get update it may)"
  say "PostgreSQL $major would be installed; then pgvector for it:"
  install_pgvector "$ROOT/usr/lib/postgresql/$major/bin" "$major"
  exit 0
fi

bindir=$(pg_bindir)
[ -n "$bindir" ] || die "no PostgreSQL server (initdb, pg_ctl) found after installing postgresql"
major=$(pg_major "$bindir")
[ -n "$major" ] || die "cannot read the PostgreSQL version from $bindir/postgres --version"
sharedir=$(pg_sharedir "$bindir" "$major")
if [ ! -e "$sharedir/extension/vector.control" ]; then
  install_pgvector "$bindir" "$major"
  [ "$DRY_RUN" = 1 ] || [ -e "$sharedir/extension/vector.control" ] ||
    die "pgvector is still missing for PostgreSQL $major ($sharedir/extension/vector.control)"
fi
nats_current || [ "$DRY_RUN" = 1 ] || die "nats-server 2.10 or newer is still missing after installing it (found: $(nats_version))"
