// checkTlsFiles (src/http/tls.ts): every way a certificate or key file can be unusable is refused
// with a message that names the file; a good pair (RSA, EC, a chain) passes.
import { writeFileSync, appendFileSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { checkTlsFiles, type TlsFileError } from '../../src/http/tls.js';
import { encryptKey, makeSelfSigned, toDer } from '../helpers/tls-files.js';

t.test('good pairs pass', async (t) => {
  const dir = t.testdir();
  const rsa = makeSelfSigned(dir, 'rsa');
  const ec = makeSelfSigned(dir, 'ec', 'ec');
  t.doesNotThrow(() => checkTlsFiles(rsa.cert, rsa.key));
  t.doesNotThrow(() => checkTlsFiles(ec.cert, ec.key));
  const chain = join(dir, 'chain.pem'); // leaf first, then another certificate (an intermediate's place)
  writeFileSync(chain, readFileSync(rsa.cert));
  appendFileSync(chain, readFileSync(ec.cert));
  t.doesNotThrow(() => checkTlsFiles(chain, rsa.key), 'a chain file: the first certificate is the leaf');
});

t.test('each bad file is named', async (t) => {
  const dir = t.testdir({ 'empty.pem': '', 'junk.pem': 'hello\n', folder: {} });
  const a = makeSelfSigned(dir, 'a');
  const b = makeSelfSigned(dir, 'b');
  const p = (f: string) => join(dir, f);
  const brokenCert = p('broken.cert.pem');
  writeFileSync(brokenCert, '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  const cases: Array<[string, string, string, RegExp]> = [
    ['missing certificate', p('nope.pem'), a.key, /^TLS certificate file '.*nope\.pem' does not exist$/],
    ['missing key', a.cert, p('nope.key'), /^TLS key file '.*nope\.key' does not exist$/],
    ['certificate is a folder', p('folder'), a.key, /^TLS certificate file '.*folder' is a directory$/],
    ['empty certificate', p('empty.pem'), a.key, /^TLS certificate file '.*empty\.pem' holds no PEM certificate/],
    ['DER certificate', toDer('x509', a.cert, p('a.cert.der')), a.key, /^TLS certificate file '.*a\.cert\.der' holds no PEM certificate/],
    ['broken PEM certificate', brokenCert, a.key, /^TLS certificate file '.*broken\.cert\.pem' does not parse as a PEM certificate: /],
    ['key given as certificate', a.key, a.key, /^TLS certificate file '.*a\.key\.pem' holds no PEM certificate/],
    ['junk key', a.cert, p('junk.pem'), /^TLS key file '.*junk\.pem' holds no PEM private key/],
    ['certificate given as key', a.cert, a.cert, /^TLS key file '.*a\.cert\.pem' holds no PEM private key/],
    ['DER key', a.cert, toDer('pkey', a.key, p('a.key.der')), /^TLS key file '.*a\.key\.der' holds no PEM private key/],
    ['encrypted key', a.cert, encryptKey(a.key, p('a.enc.pem')), /^TLS key file '.*a\.enc\.pem' is encrypted; cutout needs an unencrypted key$/],
    ['key of another certificate', a.cert, b.key, /^TLS key file '.*b\.key\.pem' does not match the certificate in '.*a\.cert\.pem'$/],
  ];
  for (const [what, cert, key, message] of cases) {
    t.throws(() => checkTlsFiles(cert, key), { name: 'TlsFileError', message }, what);
  }
  try {
    checkTlsFiles(a.cert, b.key);
  } catch (err) {
    t.equal((err as TlsFileError).file, b.key, '.file is the one at fault');
  }
});
