#!/usr/bin/env bash
# Installs what the real end-to-end tests need, only when missing (idempotent):
# - redis-server and redis-cli (Debian package redis-server);
# - PostgreSQL's initdb, postgres and psql (Debian package postgresql, which keeps them in
#   /usr/lib/postgresql/<major>/bin; found the way postgres.mjs finds them);
# - the npm packages pinned in package.json (bullmq 5.x, bullmq 6.x as the alias bullmq6, ioredis,
#   pg, pino for the fleet's pods, and bullmq-otel with the OpenTelemetry JS SDK for
#   otel-stalled.mjs; .npmrc lets bullmq-otel's peer, bullmq >= 6, be the alias) in tests/e2e/node_modules.
# Both Debian packages start a system service (Redis on 6379, PostgreSQL on 5432); the tests never
# use them: the harness starts a server of each of its own, on random loopback ports.
#
# Exit status, read by tests/e2e/mod.rs:
#   0  ready;
#   3  cannot be made ready on this machine: a tool is missing and this script cannot install it
#      (no Node or npm, no apt-get, neither root nor password-less sudo, apt-get or npm failing, as
#      they do without network). Outside CI the tests then say they were skipped and why; with
#      CI set they fail;
#   1  anything else (installed but still not found, a broken node_modules): always a failure.
# Every non-zero exit prints its reason on stderr.
set -euo pipefail
cd "$(dirname "$0")"

die() {
  echo "tests/e2e/setup.sh: $*" >&2
  exit 1
}

# Not this machine's fault to fix here: the tests may be skipped (outside CI).
unavailable() {
  echo "tests/e2e/setup.sh: $*" >&2
  exit 3
}

command -v node >/dev/null 2>&1 || unavailable "node is not installed: the e2e tests run BullMQ workers on Node 18 or later"
node_major=$(node -p 'process.versions.node.split(".")[0]')
[ "$node_major" -ge 18 ] || unavailable "node $(node --version) is too old for bullmq 5 and 6: need Node 18 or later"

have_redis() { command -v redis-server >/dev/null 2>&1 && command -v redis-cli >/dev/null 2>&1; }
# postgres.mjs imports only Node built-ins at load time, so this works before npm install.
have_postgres() { node --input-type=module -e "import { findBindir } from './postgres.mjs'; findBindir();" >/dev/null 2>&1; }

missing=()
have_redis || missing+=(redis-server)
have_postgres || missing+=(postgresql)
# The TLS capture test makes its own CA and server certificate with the openssl command.
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
if [ ${#missing[@]} -gt 0 ]; then
  command -v apt-get >/dev/null 2>&1 ||
    unavailable "${missing[*]} not installed and apt-get is not available: install them yourself (redis-server with redis-cli; PostgreSQL's initdb, postgres and psql, or set LEASETRACE_E2E_PG_BINDIR)"
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null 2>&1 ||
      unavailable "${missing[*]} not installed, not root and no sudo: install them (apt-get install -y ${missing[*]}) or run as root"
    # -n: never wait for a password that `cargo test` cannot type.
    sudo -n true 2>/dev/null ||
      unavailable "${missing[*]} not installed and sudo needs a password: install them (sudo apt-get install -y ${missing[*]})"
    sudo=(sudo -n)
  fi
  echo "tests/e2e/setup.sh: installing ${missing[*]} with apt-get" >&2
  "${sudo[@]}" apt-get update -qq >&2 || unavailable "apt-get update failed (no network?): cannot install ${missing[*]}"
  DEBIAN_FRONTEND=noninteractive "${sudo[@]}" apt-get install -y -qq "${missing[@]}" >&2 ||
    unavailable "apt-get install ${missing[*]} failed (no network?)"
  have_redis || die "redis-server or redis-cli still not found after installing redis-server"
  have_postgres || die "PostgreSQL's initdb, postgres or psql still not found after installing postgresql"
fi
# PostgreSQL refuses to run as root: as root the harness runs it as the `postgres` user.
if [ "$(id -u)" -eq 0 ] && ! id -u postgres >/dev/null 2>&1; then
  die "running as root, the harness runs PostgreSQL as the 'postgres' user, which does not exist (Debian's postgresql package creates it)"
fi

# Every dependency of package.json installed at its pinned version (an alias `npm:bullmq@6.7.0`
# installed as bullmq 6.7.0 under its own name); prints what is not, one per line.
check_modules() {
  node -e '
    const { readFileSync } = require("node:fs");
    const { dependencies } = JSON.parse(readFileSync("package.json", "utf8"));
    for (const [name, spec] of Object.entries(dependencies)) {
      const alias = /^npm:(.+)@([^@]+)$/.exec(spec);
      const [pkg, version] = alias ? [alias[1], alias[2]] : [name, spec];
      let found = "missing";
      try {
        const installed = JSON.parse(readFileSync(`node_modules/${name}/package.json`, "utf8"));
        if (installed.name === pkg && installed.version === version) continue;
        found = `${installed.name} ${installed.version}`;
      } catch {}
      console.log(`${name}: package.json pins ${pkg} ${version}, node_modules has ${found}`);
    }'
}

wrong=$(check_modules)
if [ -n "$wrong" ]; then
  command -v npm >/dev/null 2>&1 || unavailable "npm is not installed: cannot install into tests/e2e/node_modules:"$'\n'"$wrong"
  echo "tests/e2e/setup.sh: npm install in tests/e2e:"$'\n'"$wrong" >&2
  npm install --no-audit --no-fund --omit-lockfile-registry-resolved >&2 ||
    unavailable "npm install failed in tests/e2e (no network?)"
  wrong=$(check_modules)
  [ -z "$wrong" ] || die "after npm install, still:"$'\n'"$wrong"$'\n'"remove tests/e2e/node_modules and run again"
fi
