#!/usr/bin/env bash
# Installs what the picture tests (tests/pictures/mod.rs) need, only when missing (idempotent):
# - the npm packages pinned in package.json and package-lock.json (mermaid, and jsdom for the DOM
#   Mermaid's sanitizer needs) in tests/mermaid/node_modules, with `npm ci`;
# - a font for the SVG renderer test (Debian package fonts-dejavu-core), so that the SVG's text is
#   drawn, not only its shapes.
# Exits 3 with a message when it cannot install what is missing (no npm, no network, no root for
# apt-get): the tests then say SKIPPED and why, unless CI is set, where they fail. A missing font
# is only a warning: the SVG test then skips its text check (again, unless CI is set).
# Exits 1 when something installed is broken.
set -euo pipefail
cd "$(dirname "$0")"

die() {
  echo "tests/mermaid/setup.sh: $*" >&2
  exit 1
}

cannot() {
  echo "tests/mermaid/setup.sh: $*" >&2
  exit 3
}

warn() {
  echo "tests/mermaid/setup.sh: $*" >&2
}

command -v node >/dev/null 2>&1 || cannot "node is not installed: the Mermaid check runs the real Mermaid on Node 18 or later"

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
  command -v npm >/dev/null 2>&1 || cannot "npm is not installed: cannot install into tests/mermaid/node_modules:"$'\n'"$wrong"
  echo "tests/mermaid/setup.sh: npm ci in tests/mermaid:"$'\n'"$wrong" >&2
  npm ci --no-audit --no-fund >&2 || cannot "npm ci failed in tests/mermaid (no network to the npm registry?)"
  wrong=$(check_modules)
  [ -z "$wrong" ] || die "after npm ci, still:"$'\n'"$wrong"
fi

have_font() { [ -e /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || { command -v fc-list >/dev/null 2>&1 && [ -n "$(fc-list 2>/dev/null | head -n 1)" ]; }; }
if ! have_font; then
  sudo=""
  # `sudo -n`: never wait for a password.
  [ "$(id -u)" -eq 0 ] || sudo="sudo -n"
  if ! command -v apt-get >/dev/null 2>&1 || { [ -n "$sudo" ] && ! sudo -n true 2>/dev/null; }; then
    warn "no font found and it cannot be installed here (apt-get and root needed): install a TrueType font (fonts-dejavu-core) for the SVG text check"
  else
    echo "tests/mermaid/setup.sh: installing fonts-dejavu-core with apt-get" >&2
    { $sudo apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq fonts-dejavu-core >&2; } ||
      warn "apt-get install fonts-dejavu-core failed: the SVG text check will be skipped"
    have_font || warn "still no font after installing fonts-dejavu-core"
  fi
fi
