// HTTPS offers TLS 1.3 and, on TLS 1.2, only ECDHE with AEAD ciphers: CBC suites with SHA-1 or
// SHA-256 MACs and static-RSA key exchange are refused at the handshake (node's tls as the client).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import t from 'tap';
import { startTestServer } from '../helpers/server.js';
import { makeSelfSigned } from '../helpers/tls-files.js';

/** The negotiated `protocol cipher`, or the handshake's error code. */
function handshake(port: number, opts: tls.ConnectionOptions): Promise<string> {
  return new Promise((resolve) => {
    const s = tls.connect({ host: '127.0.0.1', port, rejectUnauthorized: false, ...opts }, () => {
      resolve(`${s.getProtocol()} ${s.getCipher().name}`);
      s.end();
    });
    s.on('error', (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
  });
}

for (const keyAlg of ['rsa:2048', 'ec'] as const) {
  t.test(`cipher suites offered with a ${keyAlg} certificate`, async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'cutout-tls-')); // not t.testdir(): the server helper re-creates that
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    const { cert, key } = makeSelfSigned(dir, 'server', keyAlg);
    const { server } = await startTestServer(t, { config: { tlsCert: cert, tlsKey: key } });
    const port = server.port;
    const auth = keyAlg === 'ec' ? 'ECDSA' : 'RSA';
    const tls12 = (ciphers: string) => handshake(port, { ciphers, minVersion: 'TLSv1.2', maxVersion: 'TLSv1.2' });
    for (const refused of [
      'AES128-SHA',
      'AES256-SHA',
      `ECDHE-${auth}-AES128-SHA`,
      `ECDHE-${auth}-AES256-SHA`,
      'AES128-SHA256',
      `ECDHE-${auth}-AES128-SHA256`,
      'AES128-GCM-SHA256',
      'AES256-GCM-SHA384',
    ]) {
      t.equal(await tls12(refused), 'ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE', `TLS 1.2 ${refused} refused`);
    }
    for (const accepted of [`ECDHE-${auth}-AES128-GCM-SHA256`, `ECDHE-${auth}-AES256-GCM-SHA384`, `ECDHE-${auth}-CHACHA20-POLY1305`]) {
      t.equal(await tls12(accepted), `TLSv1.2 ${accepted}`, `TLS 1.2 ${accepted} accepted`);
    }
    t.match(await handshake(port, { minVersion: 'TLSv1.3' }), /^TLSv1\.3 TLS_(AES_128_GCM_SHA256|AES_256_GCM_SHA384|CHACHA20_POLY1305_SHA256)$/, 'TLS 1.3');
    t.equal(
      await handshake(port, { minVersion: 'TLSv1', maxVersion: 'TLSv1.1', ciphers: 'DEFAULT:@SECLEVEL=0' }),
      'ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION',
      'TLS 1.1 refused',
    );
  });
}
