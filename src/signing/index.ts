/**
 * src/signing — Ed25519 signatures of evidence records, held per operator (public face).
 *   key-store.ts        <keys dir>/<operator>.{key,pub}, created on first use; the .pub files are the trust store
 *   public-key-file.ts  the file `imep keys export` writes: the operator's name, the fingerprint, the SPKI PEM
 *   signature-block.ts  the `signature` block a signed record carries and the bytes it covers
 *   sign-record.ts      signRecord (before writing) and checkRecordSignature
 *   chain.ts            the chain precommit → seal → adjudication(s) → closeout, and the role rule
 *   unit-signatures.ts  the check of one unit, as verify.ts runs it
 *   trust.ts            trust (the verifier's decision) apart from integrity: trusted / untrusted / unsigned
 *   minisign.ts         minisign's public-key and signature files (stock `minisign -V` checks them)
 *   dsse.ts             DSSE envelopes (in-toto) and the securesystemslib key JSON
 *   key-formats.ts      `imep keys export --format pem|minisign|sslib`
 *   trust-store.ts      `imep keys list | trust | revoke`: the verifier's side of the key store
 */
export {
  KEYS_DIR_ENV,
  keyCreatedInThisProcess,
  keysDir,
  keyFileStem,
  operatorOfStem,
  operatorKey,
  trustedKeys,
  exportPublicKey,
  trustPublicKey,
  removeKey,
} from './key-store.js';
export type { OperatorKey, TrustedKey, KeyStoreOptions } from './key-store.js';
export { formatPublicKeyFile, parsePublicKeyFile } from './public-key-file.js';
export type { PublicKeyFile } from './public-key-file.js';
export {
  SIGNATURE_SCHEME,
  SignatureBlockSchema,
  PrevLinkSchema,
  fingerprintOf,
  fingerprintText,
  parseFingerprint,
  signedBytes,
} from './signature-block.js';
export { trustOf, describeUntrusted, trustCommand } from './trust.js';
export type { TrustStatus, TrustReport, UntrustedSigner } from './trust.js';
export type { SignatureBlock, PrevLink } from './signature-block.js';
export {
  SIGNING_ENV,
  signingEnabled,
  prepareSigner,
  signRecord,
  prevLink,
  checkRecordSignature,
} from './sign-record.js';
export type { SignOptions, SignatureCheck } from './sign-record.js';
export { SIGNATURE_FINDINGS, checkSignatureChain } from './chain.js';
export type {
  SignatureFinding,
  SignatureFindingKind,
  SignatureReport,
  SignedRecordInfo,
  ChainRecord,
  ChainCheckInput,
  HeldAs,
} from './chain.js';
export { describeSignatures } from './describe.js';
export { identityWarning, keyOwnerFinding, parseObject, short, trustFinding } from './chain.js';
export { decodePublicKey } from './signature-block.js';
export { minisignKeyId, minisignKeyIdText, minisignPublicKey, minisignSign, rawEd25519PublicKey } from './minisign.js';
export { IN_TOTO_PAYLOAD_TYPE, dssePae, dsseKeyId, dsseSign, sslibPublicKey } from './dsse.js';
export type { DsseEnvelope } from './dsse.js';
export { KEY_FORMATS, formatPublicKey, parseKeyFormat } from './key-formats.js';
export type { KeyFormat } from './key-formats.js';
