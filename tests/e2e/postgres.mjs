// A PostgreSQL cluster of the harness's own, the way it has its own redis-server: initdb in a temp
// dir, the server in the foreground on a random loopback port with its socket in that dir, trust
// authentication (nothing but this harness can reach it), no durability (nothing outlives the run).
// A system PostgreSQL (Debian's package starts one on 5432) is never touched.
//
// As root, initdb and the server run as the `postgres` user (PostgreSQL refuses to run as root);
// otherwise as the current user. The binaries are found from LEASETRACE_E2E_PG_BINDIR, then
// `initdb` on PATH, then the newest /usr/lib/postgresql/<major>/bin (Debian keeps them off PATH).

import { spawn, execFileSync } from 'node:child_process';
import { chownSync, closeSync, existsSync, mkdirSync, openSync, readdirSync, realpathSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';

export const SUPERUSER = 'postgres';

/** The directory holding initdb, postgres and psql of one PostgreSQL release. */
export function findBindir() {
  const complete = (dir) => ['initdb', 'postgres', 'psql'].every((tool) => existsSync(join(dir, tool)));
  const fromEnv = process.env.LEASETRACE_E2E_PG_BINDIR;
  if (fromEnv) {
    if (!complete(fromEnv)) throw new Error(`LEASETRACE_E2E_PG_BINDIR=${fromEnv} lacks initdb, postgres or psql`);
    return fromEnv;
  }
  for (const dir of (process.env.PATH ?? '').split(delimiter)) {
    if (dir && existsSync(join(dir, 'initdb'))) {
      // A symlink (Debian's wrappers, /usr/local/bin links) points into the release's own bin dir.
      const real = dirname(realpathSync(join(dir, 'initdb')));
      if (complete(real)) return real;
    }
  }
  const root = '/usr/lib/postgresql';
  const majors = existsSync(root)
    ? readdirSync(root)
        .filter((major) => complete(join(root, major, 'bin')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (majors.length > 0) return join(root, majors[0], 'bin');
  throw new Error('PostgreSQL (initdb, postgres, psql) not found on PATH nor under /usr/lib/postgresql: run tests/e2e/setup.sh');
}

/** uid and gid to run the server as: the `postgres` user when we are root, else ourselves. */
function serverUser() {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return {};
  try {
    const uid = Number(execFileSync('id', ['-u', SUPERUSER], { encoding: 'utf8' }).trim());
    const gid = Number(execFileSync('id', ['-g', SUPERUSER], { encoding: 'utf8' }).trim());
    return { uid, gid };
  } catch {
    throw new Error(`running as root, PostgreSQL needs the '${SUPERUSER}' user to run as (Debian's postgresql package creates it): run tests/e2e/setup.sh`);
  }
}

/**
 * Starts the cluster in `dir` (created by the caller, removed by the caller).
 * `track(child, name)` registers a child process with the harness (its `exited` promise);
 * returns { port, bindir, version, child, logFile, psql(sql, opts), stop() }.
 */
export async function startPostgres(dir, { track, logFile, sleep }) {
  const bindir = findBindir();
  const user = serverUser();
  const data = join(dir, 'data');
  const sockets = join(dir, 'sockets');
  mkdirSync(sockets);
  if (user.uid !== undefined) {
    chownSync(dir, user.uid, user.gid);
    chownSync(sockets, user.uid, user.gid);
  }
  const log = openSync(logFile, 'a');
  try {
    execFileSync(
      join(bindir, 'initdb'),
      ['-D', data, `--username=${SUPERUSER}`, '--auth=trust', '--encoding=UTF8', '--locale=C', '--no-sync'],
      { cwd: dir, stdio: ['ignore', log, log], ...user },
    );
  } catch (error) {
    closeSync(log);
    throw new Error(`initdb failed (${error.message.split('\n')[0]}); see ${logFile}`);
  }

  const { default: pg } = await import('pg');
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    const port = 20000 + Math.floor(Math.random() * 20001);
    const child = track(
      spawn(
        join(bindir, 'postgres'),
        [
          '-D', data,
          '-p', String(port),
          '-k', sockets,
          '-c', 'listen_addresses=127.0.0.1',
          '-c', 'fsync=off',
          '-c', 'synchronous_commit=off',
          '-c', 'full_page_writes=off',
          '-c', 'max_connections=30',
        ],
        { cwd: dir, stdio: ['ignore', log, log], ...user },
      ),
      'postgres',
    );
    const deadline = Date.now() + 15_000;
    let version = null;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      const client = new pg.Client({ host: '127.0.0.1', port, user: SUPERUSER, database: 'postgres', connectionTimeoutMillis: 1000 });
      client.on('error', () => {});
      try {
        await client.connect();
        // The server we started, not someone else's on that port.
        const { rows } = await client.query('select current_setting($1) as data, current_setting($2) as version', ['data_directory', 'server_version']);
        await client.end();
        if (realpathSync(rows[0].data) !== realpathSync(data)) {
          throw new Error(`port ${port} answers but it is not our PostgreSQL (data directory ${rows[0].data})`);
        }
        version = rows[0].version;
        break;
      } catch (error) {
        await client.end().catch(() => {});
        if (/not our PostgreSQL/.test(error.message)) break;
        await sleep(100);
      }
    }
    if (version) {
      closeSync(log);
      // Should the harness be SIGKILLed, nothing would stop this server: a watchdog does
      // (immediate shutdown, then SIGKILL, then the temp dir goes).
      track(
        spawn(
          'sh',
          ['-c', 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -QUIT "$1" 2>/dev/null; sleep 2; kill -9 "$1" 2>/dev/null; rm -rf "$2"', String(process.pid), String(child.pid), dir],
          { stdio: 'ignore' },
        ),
        'postgres watchdog',
      );
      const psql = (sql, { database = 'postgres', env = {}, args = [] } = {}) =>
        execFileSync(
          join(bindir, 'psql'),
          ['-X', '-q', ...args, '-v', 'ON_ERROR_STOP=1', '-h', '127.0.0.1', '-p', String(port), '-U', SUPERUSER, '-d', database, '-c', sql],
          { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...env } },
        );
      const stop = async () => {
        if (child.exitCode !== null || child.signalCode !== null) return;
        child.kill('SIGINT'); // fast shutdown
        const timeout = sleep(10_000).then(() => 'timeout');
        if ((await Promise.race([child.exited, timeout])) === 'timeout') {
          child.kill('SIGKILL');
          await child.exited;
        }
      };
      return { port, bindir, version, child, psql, stop };
    }
    child.kill('SIGKILL');
    await child.exited;
  }
  closeSync(log);
  throw new Error(`could not start PostgreSQL on a loopback port (10 attempts); see ${logFile}`);
}
