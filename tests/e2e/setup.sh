#!/usr/bin/env bash
# Installs what the real-BullMQ end-to-end tests need, only when missing (idempotent):
# redis-server and redis-cli (Debian package redis-server) and the pinned bullmq in
# tests/e2e/node_modules. Exits non-zero with a message naming what is missing.
set -euo pipefail
cd "$(dirname "$0")"

die() {
  echo "tests/e2e/setup.sh: $*" >&2
  exit 1
}

if ! command -v redis-server >/dev/null 2>&1 || ! command -v redis-cli >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 ||
    die "redis-server is not installed and apt-get is not available: install redis-server (with redis-cli) yourself"
  sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 || die "redis-server is not installed; run as root or install it: apt-get install -y redis-server"
    sudo="sudo"
  fi
  echo "tests/e2e/setup.sh: installing redis-server with apt-get" >&2
  # The package starts a system service on 6379; the tests never use it (they start their own).
  $sudo apt-get update -qq >&2 || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq redis-server >&2 ||
    die "apt-get install redis-server failed"
  command -v redis-server >/dev/null 2>&1 || die "redis-server still not found after installing it"
  command -v redis-cli >/dev/null 2>&1 || die "redis-cli still not found after installing redis-server"
fi

command -v node >/dev/null 2>&1 || die "node is not installed: the e2e tests run BullMQ workers on Node 20 or later"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || die "node $(node --version) is too old for bullmq 5: need Node 18 or later"

if [ ! -f node_modules/bullmq/package.json ]; then
  command -v npm >/dev/null 2>&1 || die "npm is not installed: cannot install bullmq into tests/e2e/node_modules"
  echo "tests/e2e/setup.sh: npm install (bullmq) in tests/e2e" >&2
  npm install --no-audit --no-fund --omit-lockfile-registry-resolved >&2 || die "npm install failed in tests/e2e"
fi

installed=$(node -p 'require("./node_modules/bullmq/package.json").version')
wanted=$(node -p 'require("./package.json").dependencies.bullmq')
[ "$installed" = "$wanted" ] ||
  die "tests/e2e/node_modules has bullmq $installed but package.json pins $wanted: remove tests/e2e/node_modules and run again"
