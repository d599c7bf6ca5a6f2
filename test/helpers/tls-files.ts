// Throwaway TLS files for tests, made with the openssl command line (the certificate itself is
// test/harness/self-signed.ts's, which bench:faults --faults fuzz-http --tls uses too).
import { execFileSync } from 'node:child_process';

export { makeSelfSigned } from '../harness/self-signed.js';

/** `file` (PEM) rewritten as DER to `out`. */
export function toDer(kind: 'x509' | 'pkey', file: string, out: string): string {
  execFileSync('openssl', [kind, '-in', file, '-outform', 'DER', '-out', out], { stdio: 'ignore' });
  return out;
}

/** `key` encrypted with a passphrase, written to `out`. */
export function encryptKey(key: string, out: string): string {
  execFileSync('openssl', ['pkey', '-in', key, '-aes256', '-passout', 'pass:secret', '-out', out], { stdio: 'ignore' });
  return out;
}
