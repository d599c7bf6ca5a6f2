// TLS for uWS's SSLApp: the cipher list, and a check of the certificate and key files that runs
// before anything slow starts (the model), so a bad file is named instead of uWS's bare
// "App construction failed". Pure node:crypto and node:fs; imports nothing of ours.

import { X509Certificate, createPrivateKey, type KeyObject } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AppOptions } from 'uWebSockets.js';

/**
 * TLS 1.2 suites: ECDHE key exchange with AEAD ciphers only (Mozilla's "intermediate" list without
 * DHE, which uWS's BoringSSL does not have). No CBC, no SHA-1 MAC, no static-RSA key exchange.
 * TLS 1.3 suites are fixed by BoringSSL (all AEAD), and TLS 1.0/1.1 are refused by uSockets itself.
 * BoringSSL skips names it does not know; a list with none it knows fails SSLApp.
 */
export const TLS12_CIPHERS = [
  'ECDHE-ECDSA-AES128-GCM-SHA256',
  'ECDHE-RSA-AES128-GCM-SHA256',
  'ECDHE-ECDSA-AES256-GCM-SHA384',
  'ECDHE-RSA-AES256-GCM-SHA384',
  'ECDHE-ECDSA-CHACHA20-POLY1305',
  'ECDHE-RSA-CHACHA20-POLY1305',
].join(':');

/** A certificate or key file that cannot serve; `file` is the one at fault. */
export class TlsFileError extends Error {
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(message);
    this.name = 'TlsFileError';
  }
}

const READ_ERRORS: Readonly<Record<string, string>> = {
  ENOENT: 'does not exist',
  EACCES: 'is not readable (permission denied)',
  EISDIR: 'is a directory',
};

function readText(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code ?? '';
    throw new TlsFileError(file, `TLS ${what} file '${file}' ${READ_ERRORS[code] ?? `cannot be read (${(err as Error).message})`}`);
  }
}

const reason = (err: unknown) => (err as Error).message;

/**
 * Throws TlsFileError unless `certFile` holds a PEM certificate (a chain's first one is the leaf),
 * `keyFile` an unencrypted PEM private key, and the key belongs to that certificate.
 */
export function checkTlsFiles(certFile: string, keyFile: string): void {
  const certPem = readText(certFile, 'certificate');
  if (!certPem.includes('-----BEGIN CERTIFICATE-----')) {
    throw new TlsFileError(certFile, `TLS certificate file '${certFile}' holds no PEM certificate (no '-----BEGIN CERTIFICATE-----' line)`);
  }
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(certPem);
  } catch (err) {
    throw new TlsFileError(certFile, `TLS certificate file '${certFile}' does not parse as a PEM certificate: ${reason(err)}`);
  }

  const keyPem = readText(keyFile, 'key');
  if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(keyPem)) {
    throw new TlsFileError(keyFile, `TLS key file '${keyFile}' holds no PEM private key (no '-----BEGIN … PRIVATE KEY-----' line)`);
  }
  // PKCS#8 (`BEGIN ENCRYPTED PRIVATE KEY`) or the legacy OpenSSL header: uWS would ask for a passphrase.
  if (/-----BEGIN ENCRYPTED PRIVATE KEY-----|Proc-Type: 4,ENCRYPTED/.test(keyPem)) {
    throw new TlsFileError(keyFile, `TLS key file '${keyFile}' is encrypted; cutout needs an unencrypted key`);
  }
  let key: KeyObject;
  try {
    key = createPrivateKey(keyPem);
  } catch (err) {
    throw new TlsFileError(keyFile, `TLS key file '${keyFile}' does not parse as a PEM private key: ${reason(err)}`);
  }
  if (!cert.checkPrivateKey(key)) {
    throw new TlsFileError(keyFile, `TLS key file '${keyFile}' does not match the certificate in '${certFile}'`);
  }
}

/** SSLApp options for these files, checked first. */
export function sslAppOptions(certFile: string, keyFile: string): AppOptions {
  checkTlsFiles(certFile, keyFile);
  return { cert_file_name: certFile, key_file_name: keyFile, ssl_ciphers: TLS12_CIPHERS };
}
