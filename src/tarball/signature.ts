/**
 * Signing a tarball: an ed25519 signature of checksum.sha256, which lists the
 * sha256 of every other file, stored in the tarball as checksum.sha256.sig
 * (base64). Node's crypto only; keys are PEM (openssl genpkey -algorithm ed25519).
 */
import { createPrivateKey, createPublicKey, sign, verify, type KeyObject } from 'node:crypto';
import { basename } from 'node:path';
import { FlotillaError } from '../diagnostics/index.js';
import { formatChecksumProblem, verifyChecksums } from './checksums.js';
import { CHECKSUM_FILES, SIGNATURE_FILE } from './layout.js';
import { readTarGzSafely } from './tar-read.js';
import { BUNDLE_TAR_OPTIONS } from './tarball.js';
import { writeTarGzFile } from './tar-write.js';

export class SignatureKeyError extends FlotillaError {}

function ed25519(key: KeyObject, what: string): KeyObject {
  if (key.asymmetricKeyType !== 'ed25519') throw new SignatureKeyError(`${what} is a ${key.asymmetricKeyType ?? 'symmetric'} key; flotilla signs with ed25519`);
  return key;
}

function parseKey(pem: string, kind: 'private' | 'public', what: string): KeyObject {
  try {
    return ed25519(kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem), what);
  } catch (error) {
    if (error instanceof SignatureKeyError) throw error;
    // OpenSSL's own words (`DECODER routines::unsupported`) say nothing a user can act on: say what is expected.
    const expected =
      kind === 'private'
        ? '-----BEGIN PRIVATE KEY----- (made by: openssl genpkey -algorithm ed25519 -out key.pem)'
        : '-----BEGIN PUBLIC KEY----- (made by: openssl pkey -in key.pem -pubout -out key.pub.pem)';
    throw new SignatureKeyError(`${what} is not an ed25519 ${kind} key in PEM format: expected ${expected}`, { cause: error });
  }
}

/** The signature file's text for `checksums` (the bytes of checksum.sha256). */
function signChecksums(checksums: Buffer, privateKeyPem: string, what = 'the signing key'): string {
  return `${sign(null, checksums, parseKey(privateKeyPem, 'private', what)).toString('base64')}\n`;
}

/** Whether `signature` (the signature file's text) is a valid signature of `checksums` by the key. */
export function checkSignature(checksums: Buffer, signature: string, publicKeyPem: string, what = 'the public key'): boolean {
  const key = parseKey(publicKeyPem, 'public', what);
  const bytes = Buffer.from(signature.trim(), 'base64');
  return bytes.length === 64 && verify(null, checksums, key, bytes);
}

export interface SignedBundle {
  readonly file: string;
  readonly sha256: string;
}

/**
 * Adds (or replaces) the signature in a tarball, rewritten in place
 * atomically. A tarball whose checksums do not hold is refused: signing it
 * would vouch for bytes nobody built.
 */
export async function signBundleFile(file: string, privateKeyPem: string): Promise<SignedBundle> {
  const files = await readTarGzSafely(file, { label: basename(file) });
  const problems = verifyChecksums(files, { required: ['sha256', 'md5'] });
  if (problems.length > 0)
    throw new FlotillaError(`${basename(file)}: not signing a tarball whose checksums fail:\n  ${problems.map(formatChecksumProblem).join('\n  ')}`);
  const checksums = files.get(CHECKSUM_FILES.sha256) as Buffer;
  files.set(SIGNATURE_FILE, Buffer.from(signChecksums(checksums, privateKeyPem)));
  const written = await writeTarGzFile(
    file,
    [...files].map(([path, data]) => ({ path, data })),
    BUNDLE_TAR_OPTIONS,
  );
  return { file, sha256: written.sha256 };
}
