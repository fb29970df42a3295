// A redis-server of the fleet harness's own, the way postgres.mjs gives it a PostgreSQL: a temp
// dir, a random loopback port, no persistence, and a watchdog that ends the server should the
// harness itself be SIGKILLed. A system Redis (Debian's package starts one on 6379) is never used.
// (harness.mjs keeps its own copy of this, written before the fleet.)

import { spawn } from 'node:child_process';
import { join } from 'node:path';

/**
 * Starts the server in `dir` (created by the caller, removed by the caller).
 * `track(child, name)` registers a child process with the harness (its `exited` promise);
 * returns { port, child, client (ioredis, connected), logFile }.
 */
export async function startRedis(dir, { track, sleep }) {
  const { default: IORedis } = await import('ioredis');
  for (let attempt = 1; attempt <= 10; attempt += 1) {
    const port = 20000 + Math.floor(Math.random() * 20001);
    const logFile = join(dir, `redis-${port}.log`);
    const child = track(
      spawn(
        'redis-server',
        ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir, '--daemonize', 'no', '--logfile', logFile],
        { stdio: 'ignore' },
      ),
      'redis-server',
    );
    const client = new IORedis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
    client.on('error', () => {});
    const deadline = Date.now() + 5000;
    let ready = false;
    let foreign = false;
    while (Date.now() < deadline && child.exitCode === null && child.signalCode === null) {
      try {
        if (client.status !== 'ready') await client.connect();
        // The server we started, not someone else's on that port.
        const info = await client.info('server');
        if (new RegExp(`process_id:${child.pid}\\b`).test(info)) ready = true;
        else foreign = true;
        break;
      } catch {
        client.disconnect();
        await sleep(50);
      }
    }
    if (ready) {
      track(
        spawn(
          'sh',
          ['-c', 'while kill -0 "$0" 2>/dev/null; do sleep 1; done; kill -9 "$1" 2>/dev/null; rm -rf "$2"', String(process.pid), String(child.pid), dir],
          { stdio: 'ignore' },
        ),
        'redis watchdog',
      );
      return { port, child, client, logFile };
    }
    client.disconnect();
    child.kill('SIGKILL');
    await child.exited;
    if (foreign) continue;
  }
  throw new Error('could not start redis-server on a loopback port (10 attempts); is redis-server installed? run tests/e2e/setup.sh');
}
