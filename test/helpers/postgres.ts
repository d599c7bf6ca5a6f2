// A real PostgreSQL server for the tests, started by the tests (test/harness/postgres-server.ts: initdb into a
// temp folder, postgres on a free loopback port, as `nobody` under root) and removed at teardown. Any
// failure to start is a test failure, never a skip.

import type { Test } from 'tap';
import { startPostgresServer, type PostgresServer } from '../harness/postgres-server.js';

export type TestPostgres = PostgresServer;

export async function startPostgres(t: Test, settings: Record<string, string> = {}): Promise<TestPostgres> {
  const server = await startPostgresServer({ settings });
  t.teardown(() => server.stop());
  return server;
}
