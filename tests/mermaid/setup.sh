#!/usr/bin/env bash
# Installs what the picture tests (tests/pictures/mod.rs) need, only when missing (idempotent):
# - the npm packages pinned in package.json and package-lock.json (mermaid, and jsdom for the DOM
#   Mermaid's sanitizer needs) in tests/mermaid/node_modules, with `npm ci`;
# - a font for the SVG renderer test (Debian package fonts-dejavu-core), so that the SVG's text is
#   drawn, not only its shapes.
# Exits non-zero with a message naming what is missing.
set -euo pipefail
cd "$(dirname "$0")"

die() {
  echo "tests/mermaid/setup.sh: $*" >&2
  exit 1
}

command -v node >/dev/null 2>&1 || die "node is not installed: the Mermaid check runs the real Mermaid on Node 18 or later"

# Every dependency of package.json installed at its pinned version; prints what is not.
check_modules() {
  node -e '
    const { readFileSync } = require("node:fs");
    const { dependencies } = JSON.parse(readFileSync("package.json", "utf8"));
    for (const [name, version] of Object.entries(dependencies)) {
      let found = "missing";
      try {
        found = JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8")).version;
        if (found === version) continue;
      } catch {}
      console.log(`${name}: package.json pins ${version}, node_modules has ${found}`);
    }'
}

wrong=$(check_modules)
if [ -n "$wrong" ]; then
  command -v npm >/dev/null 2>&1 || die "npm is not installed: cannot install into tests/mermaid/node_modules:"$'\n'"$wrong"
  echo "tests/mermaid/setup.sh: npm ci in tests/mermaid:"$'\n'"$wrong" >&2
  npm ci --no-audit --no-fund >&2 || die "npm ci failed in tests/mermaid"
  wrong=$(check_modules)
  [ -z "$wrong" ] || die "after npm ci, still:"$'\n'"$wrong"
fi

have_font() { [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list 2>/dev/null | head -n 1)" ]; }; }
if ! have_font; then
  command -v apt-get >/dev/null 2>&1 || die "no font found and apt-get is not available: install a TrueType font (fonts-dejavu-core)"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "no font found; run as root or install one: apt-get install -y fonts-dejavu-core"
    sudo="sudo"
  fi
  echo "tests/mermaid/setup.sh: installing fonts-dejavu-core with apt-get" >&2
  $sudo apt-get update -qq >&2 || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq fonts-dejavu-core >&2 || die "apt-get install fonts-dejavu-core failed"
  have_font || die "still no font after installing fonts-dejavu-core"
fi
