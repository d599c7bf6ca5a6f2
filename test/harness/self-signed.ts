// A throwaway self-signed certificate for 127.0.0.1, made with the openssl command line: for the
// benches that serve HTTPS (bench:faults --faults fuzz-http --tls) and the tests (test/helpers/tls-files.ts).
import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

export interface CertFiles {
  cert: string;
  key: string;
}

/** A self-signed certificate for 127.0.0.1 and its key: `<dir>/<name>.cert.pem`, `<dir>/<name>.key.pem`. */
export function makeSelfSigned(dir: string, name = 'server', keyAlg: 'rsa:2048' | 'ec' = 'rsa:2048'): CertFiles {
  const cert = join(dir, `${name}.cert.pem`);
  const key = join(dir, `${name}.key.pem`);
  const newkey = keyAlg === 'ec' ? ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1'] : ['-newkey', keyAlg];
  execFileSync(
    'openssl',
    ['req', '-x509', ...newkey, '-nodes', '-keyout', key, '-out', cert, '-days', '1', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'],
    { stdio: 'ignore' },
  );
  return { cert, key };
}
