// `cutout serve --processes 2` as one service: GET /metrics reports the whole group whichever process
// a scrape reaches (counters never go back between scrapes, nor when a process is killed and
// replaced), and the sandbox's per-client window counts every process's requests once. Each request
// goes on a connection of its own, so the kernel spreads them over both processes.
import http from 'node:http';
import path from 'node:path';
import { spawn } from 'node:child_process';
import t from 'tap';
import { PACKAGE_ROOT } from '../../src/model/manifest.js';
import { freePort } from '../helpers/ledger-procs.js';

const CLI = path.join(PACKAGE_ROOT, 'dist', 'src', 'cli', 'main.js');

function request(port: number, method: string, urlPath: string, body?: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      { host: '127.0.0.1', port, method, path: urlPath, agent: false, headers: body ? { 'Content-Type': 'application/json' } : {} },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (d: Buffer) => chunks.push(d));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString() }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const sample = (text: string, series: string): number => {
  const line = text.split('\n').find((l) => l.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
};

t.test('metrics and the sandbox window are the group`s', { timeout: 180_000 }, async (t) => {
  const port = await freePort();
  const data = t.testdir({});
  const args = [
    'serve',
    '--processes',
    '2',
    '--port',
    String(port),
    '--host',
    '127.0.0.1',
    '--data',
    data,
    '--workers',
    '1',
    '--no-demo-key',
    '--sandbox-rate-per-minute',
    '3',
  ];
  const sup = spawn(process.execPath, [CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  t.teardown(() => {
    if (sup.exitCode === null) sup.kill('SIGKILL');
  });
  let out = '';
  sup.stdout.on('data', (d: Buffer) => (out += d.toString()));
  sup.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const waitFor = async (re: RegExp, count: number, what: string) => {
    const all = new RegExp(re.source, 'g');
    const deadline = Date.now() + 120_000;
    while ((out.match(all) ?? []).length < count) {
      if (Date.now() > deadline || sup.exitCode !== null) throw new Error(`no ${what}:\n${out}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };
  await waitFor(/cutout listening on/, 2, 'two listening processes');
  const ACCOUNT_403 = 'cutout_http_requests_total{route="/v1.0/account",status="403"}';

  for (let i = 0; i < 12; i++) t.equal((await request(port, 'GET', '/v1.0/account')).status, 403);
  const seen: number[] = [];
  for (let i = 0; i < 8; i++) {
    const r = await request(port, 'GET', '/metrics');
    t.equal(r.status, 200);
    seen.push(sample(r.text, ACCOUNT_403));
    t.match(r.text, /^cutout_build_info\{version="[^"]+",model="[^"]+",device="[^"]+",model_family="[^"]+",model_sha256="[^"]+"\} 1$/m, 'build info stays 1');
  }
  t.same(seen, Array(8).fill(12), 'every scrape, whichever process answers it, counts all 12');

  // Kill process 0; the group keeps its counts once the replacement listens.
  const pid0 = Number(/process 0 started \(pid (\d+)\)/.exec(out)![1]);
  process.kill(pid0, 'SIGKILL');
  await waitFor(/cutout listening on/, 3, 'the replacement to listen');
  for (let i = 0; i < 4; i++) t.equal(sample((await request(port, 'GET', '/metrics')).text, ACCOUNT_403), 12, `after the restart, scrape ${i}`);
  for (let i = 0; i < 4; i++) await request(port, 'GET', '/v1.0/account');
  t.equal(sample((await request(port, 'GET', '/metrics')).text, ACCOUNT_403), 16, 'and counts on from there');

  // The sandbox window: 3 a minute for this client, from the group. Away from the minute's turn.
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((r) => setTimeout(r, 61_000 - intoMinute));
  const statuses: number[] = [];
  const pids = () => new Set([...out.matchAll(/^\{.*"pid":(\d+).*"route":"\/sandbox\/v1\.0\/removebg".*$/gm)].map((m) => m[1]));
  // Until both processes have answered sandbox requests (the request log names the pid), at least 10.
  for (let i = 0; i < 60 && (i < 10 || pids().size < 2); i++) {
    statuses.push((await request(port, 'POST', '/sandbox/v1.0/removebg', '{}')).status);
    await new Promise((r) => setTimeout(r, 20));
  }
  t.equal(pids().size, 2, 'both processes answered sandbox requests');
  t.same(statuses.slice(0, 3), [400, 400, 400], 'the first three counted (and refused: no image)');
  t.same(new Set(statuses.slice(3)), new Set([429]), `every later one is over the group's window (${statuses.length} sent)`);

  const exited = new Promise<number | null>((resolve) => sup.once('exit', (code) => resolve(code)));
  sup.kill('SIGTERM');
  t.equal(await exited, 0, 'stops cleanly');
});
