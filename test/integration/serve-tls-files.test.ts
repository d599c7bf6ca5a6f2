// `cutout serve` with a bad TLS file stops before anything slow: the file is named, no ledger is
// opened, no model loaded and, with --processes, no process forked.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { makeSelfSigned } from '../helpers/tls-files.js';

const ENTRY = fileURLToPath(new URL('../helpers/serve-entry.js', import.meta.url));

function serve(args: string[]): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [ENTRY, ...args], (err, stdout, stderr) => {
      resolve({ code: err ? ((err as { code?: number }).code ?? null) : 0, out: stdout + stderr });
    });
  });
}

t.test('bad certificate or key files are named before the model loads', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'cutout-tls-files-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const a = makeSelfSigned(dir, 'a');
  const b = makeSelfSigned(dir, 'b');
  const data = join(dir, 'data');
  const cases: Array<[string, string[], RegExp]> = [
    [
      'missing certificate',
      ['--tls-cert', join(dir, 'missing.pem'), '--tls-key', a.key],
      /cutout serve: TLS certificate file '.*missing\.pem' does not exist\n/,
    ],
    [
      'key of another certificate',
      ['--tls-cert', a.cert, '--tls-key', b.key],
      /cutout serve: TLS key file '.*b\.key\.pem' does not match the certificate in '.*a\.cert\.pem'\n/,
    ],
    [
      'with --processes 2',
      ['--processes', '2', '--port', '1', '--tls-cert', a.key, '--tls-key', a.key],
      /cutout serve: TLS certificate file '.*a\.key\.pem' holds no PEM certificate/,
    ],
  ];
  for (const [what, args, message] of cases) {
    const { code, out } = await serve(['--host', '127.0.0.1', '--port', '0', '--data', data, '--no-demo-key', ...args]);
    t.equal(code, 1, `${what}: exit 1`);
    t.match(out, message, `${what}: the file is named`);
    t.notMatch(out, /device:|listening|process \d started/, `${what}: no model loaded, no process forked`);
    t.equal(existsSync(data), false, `${what}: no data folder or ledger opened`);
  }
});
