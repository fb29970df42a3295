#!/usr/bin/env bash
# Installs what the browser tests (tests/browser/mod.rs) need, only when missing (idempotent): a
# headless Chromium (Debian package chromium) and a font for it (fonts-dejavu-core), then prints
# the browser's path on stdout.
# Exits 3 with a message when it cannot install what is missing (no apt-get, no root, no network
# to the package mirror): the tests then say SKIPPED and why, unless CI is set, where they fail.
# Exits 1 when the browser is installed but does not run.
set -euo pipefail
cd "$(dirname "$0")"

die() {
  echo "tests/browser/setup.sh: $*" >&2
  exit 1
}

cannot() {
  echo "tests/browser/setup.sh: $*" >&2
  exit 3
}

find_browser() {
  local name
  for name in chromium chromium-browser google-chrome-stable google-chrome; do
    if command -v "$name" >/dev/null 2>&1; then
      command -v "$name"
      return 0
    fi
  done
  return 1
}

have_font() { [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ]; }

missing=()
find_browser >/dev/null || missing+=(chromium)
have_font || missing+=(fonts-dejavu-core)
if [ ${#missing[@]} -gt 0 ]; then
  sudo=""
  # `sudo -n`: never wait for a password.
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  command -v apt-get >/dev/null 2>&1 || cannot "${missing[*]} missing and no apt-get to install it: install Chromium (or Chrome) and a TrueType font"
  if [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; then
    cannot "${missing[*]} missing and no root to install it with apt-get"
  fi
  echo "tests/browser/setup.sh: installing ${missing[*]} with apt-get" >&2
  { $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2; } ||
    cannot "apt-get install ${missing[*]} failed (no network to the package mirror?)"
fi

browser=$(find_browser) || die "no chromium after installing it"
"$browser" --version >/dev/null 2>&1 || die "$browser --version fails: the browser is broken"
echo "$browser"
