// A real PostgreSQL server for the tests and bench:faults: `initdb` into a temp folder, `postgres` on a
// free loopback port, removed by stop(). As root (CI), initdb and postgres refuse to run, so both run
// as the unprivileged user `nobody`. It can be crashed as `pg_ctl stop -m immediate` does, started
// again on the same folder and port, and stalled (SIGSTOP of the postmaster and its backends).
//
// Binaries: $CUTOUT_PG_BIN, else the newest /usr/lib/postgresql/<version>/bin (Debian's `postgresql`
// package, which .ci/run installs), else `initdb` on PATH.

import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { chmodSync, chownSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';

export interface PostgresServer {
  port: number;
  /** postgres://cutout@127.0.0.1:<port>/<database> */
  url(database?: string): string;
  /** A new empty database; its URL. */
  createDatabase(name?: string): Promise<string>;
  /** Kill it as `pg_ctl stop -m immediate` does (no checkpoint; what was not flushed is lost). */
  crash(): Promise<void>;
  /** Start it again after crash(), on the same folder and port; resolves once it answers a query. */
  start(): Promise<void>;
  /** SIGSTOP (true) or SIGCONT (false) the postmaster and every backend under it: a wedged database. */
  stall(stopped: boolean): void;
  /** Stop it and remove its folder (idempotent). */
  stop(): Promise<void>;
}

export interface PostgresSettings {
  /** postgresql.conf settings given as -c flags, over the defaults below. */
  settings?: Record<string, string>;
  /**
   * Throwaway data (tests): fsync and full-page writes off. Default true; bench:faults keeps PostgreSQL's
   * own defaults, so a crash loses what a real server would.
   */
  throwaway?: boolean;
}

function binDir(): string {
  if (process.env.CUTOUT_PG_BIN) return process.env.CUTOUT_PG_BIN;
  const root = '/usr/lib/postgresql';
  if (existsSync(root)) {
    const versions = readdirSync(root)
      .filter((v) => existsSync(join(root, v, 'bin', 'postgres')))
      .sort((a, b) => Number(b) - Number(a));
    if (versions[0]) return join(root, versions[0], 'bin');
  }
  const which = spawnSync('sh', ['-c', 'command -v initdb'], { encoding: 'utf8' });
  if (which.status === 0 && which.stdout.trim()) return join(which.stdout.trim(), '..');
  throw new Error("PostgreSQL server binaries not found (install Debian's postgresql package, or set CUTOUT_PG_BIN): .ci/run installs it");
}

/** uid/gid of `nobody` when running as root (initdb and postgres refuse root), else nothing. */
function unprivileged(): { uid: number; gid: number } | undefined {
  if (process.getuid?.() !== 0) return undefined;
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith('nobody:'));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) throw new Error('running as root and no `nobody` user to run PostgreSQL as');
  return { uid: Number(uid), gid: Number(gid) };
}

/** A loopback port that is free right now. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address() as net.AddressInfo;
      srv.close(() => resolve(port));
    });
  });
}

/** The postmaster and every process under it (its backends and helpers), from /proc. */
function processTree(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // gone since readdir
    }
  }
  const all: number[] = [];
  for (const queue = [root]; queue.length > 0; ) {
    const p = queue.pop()!;
    all.push(p);
    queue.push(...(children.get(p) ?? []));
  }
  return all;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const p of running) {
    p.kill('SIGCONT');
    p.kill('SIGKILL');
  }
});

let dbCounter = 0;

export async function startPostgresServer(opts: PostgresSettings = {}): Promise<PostgresServer> {
  const bin = binDir();
  const user = unprivileged();
  // As root the folder must be reachable by `nobody`: /tmp, not a TMPDIR that may sit under /root.
  const dir = mkdtempSync(join(user ? '/tmp' : tmpdir(), 'cutout-pg-'));
  const data = join(dir, 'data');
  if (user) chownSync(dir, user.uid, user.gid);
  chmodSync(dir, 0o700);
  const asUser = user ? { uid: user.uid, gid: user.gid } : {};
  const env = { ...process.env, LC_ALL: 'C', LANG: 'C' };

  const init = spawnSync(join(bin, 'initdb'), ['-D', data, '-U', 'cutout', '-A', 'trust', '-E', 'UTF8', '--locale=C', '--no-sync'], {
    ...asUser,
    env,
    cwd: dir,
    encoding: 'utf8',
  });
  if (init.status !== 0) {
    rmSync(dir, { recursive: true, force: true });
    throw new Error(`initdb failed (${init.status ?? init.signal}): ${init.error?.message ?? ''}${init.stderr}${init.stdout}`);
  }

  const port = await freePort();
  const conf = {
    listen_addresses: '127.0.0.1',
    unix_socket_directories: dir,
    max_connections: '200',
    ...((opts.throwaway ?? true) && { fsync: 'off', full_page_writes: 'off' }),
    ...opts.settings,
  };
  const args = ['-D', data, '-p', String(port), ...Object.entries(conf).flatMap(([k, v]) => ['-c', `${k}=${v}`])];
  const url = (database = 'postgres') => `postgres://cutout@127.0.0.1:${port}/${database}`;
  let server!: ChildProcess;
  let exited!: Promise<void>;
  let gone = true;
  let removed = false;
  const launch = async () => {
    server = spawn(join(bin, 'postgres'), args, { ...asUser, env, cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] });
    running.add(server);
    gone = false;
    let log = '';
    server.stdout!.on('data', (d: Buffer) => (log += d.toString()));
    server.stderr!.on('data', (d: Buffer) => (log += d.toString()));
    const self = server;
    exited = new Promise<void>((resolve) => self.once('exit', () => resolve()));
    void exited.then(() => {
      gone = true;
      running.delete(self);
    });
    // Ready when it answers a query; generous bound, polled.
    const deadline = Date.now() + 60_000;
    for (;;) {
      if (gone) throw new Error(`postgres exited before accepting connections:\n${log}`);
      const client = new pg.Client({ connectionString: url(), connectionTimeoutMillis: 2000 });
      try {
        await client.connect();
        await client.query('SELECT 1');
        await client.end();
        break;
      } catch (err) {
        await client.end().catch(() => {});
        if (Date.now() > deadline) throw new Error(`postgres did not accept connections within 60 s (${(err as Error).message}):\n${log}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };
  let stalled = false;
  const stall = (stopped: boolean) => {
    if (gone || stalled === stopped) return;
    stalled = stopped;
    for (const pid of processTree(server.pid!)) {
      try {
        process.kill(pid, stopped ? 'SIGSTOP' : 'SIGCONT');
      } catch {
        // gone
      }
    }
  };
  const stop = async () => {
    stall(false);
    if (!gone) {
      server.kill('SIGINT'); // fast shutdown
      const timer = setTimeout(() => server.kill('SIGKILL'), 10_000);
      await exited;
      clearTimeout(timer);
    }
    if (!removed) rmSync(dir, { recursive: true, force: true });
    removed = true;
  };
  try {
    await launch();
  } catch (err) {
    await stop();
    throw err;
  }

  return {
    port,
    url,
    async crash() {
      if (gone) return;
      stall(false);
      server.kill('SIGQUIT');
      await exited;
    },
    start: launch,
    stall,
    async createDatabase(name = `t${process.pid}_${++dbCounter}`) {
      const client = new pg.Client({ connectionString: url() });
      await client.connect();
      try {
        await client.query(`CREATE DATABASE ${name}`);
      } finally {
        await client.end();
      }
      return url(name);
    },
    stop,
  };
}
