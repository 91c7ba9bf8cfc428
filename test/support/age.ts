import { generateKeyPairSync } from 'node:crypto';

/**
 * An age X25519 key pair made with Node's crypto, in age's encoding (Bech32, BIP 173): the identity is the
 * 32-byte private scalar under the HRP "AGE-SECRET-KEY-" (upper case), the recipient the public key under
 * "age". Cheaper than building age-keygen, and sops reads both as age-keygen's output.
 */
export function ageKeyPair(): { identity: string; recipient: string } {
  const { privateKey, publicKey } = generateKeyPairSync('x25519');
  const priv = Buffer.from(privateKey.export({ format: 'jwk' }).d!, 'base64url');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x!, 'base64url');
  return { identity: bech32('age-secret-key-', priv).toUpperCase(), recipient: bech32('age', pub) };
}

const CHARSET = 'qpzry9x8gf2tvdw0s3jn54khce6mua7l';

function polymod(values: number[]): number {
  const gen = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= gen[i]!;
  }
  return chk;
}

function bech32(hrp: string, data: Buffer): string {
  // 8-bit bytes → 5-bit groups
  const words: number[] = [];
  let acc = 0;
  let bits = 0;
  for (const byte of data) {
    acc = (acc << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      bits -= 5;
      words.push((acc >>> bits) & 31);
    }
  }
  if (bits > 0) words.push((acc << (5 - bits)) & 31);
  const expand = [...hrp]
    .map((c) => c.charCodeAt(0) >> 5)
    .concat(
      [0],
      [...hrp].map((c) => c.charCodeAt(0) & 31),
    );
  const mod = polymod([...expand, ...words, 0, 0, 0, 0, 0, 0]) ^ 1;
  const checksum = Array.from({ length: 6 }, (_, i) => (mod >>> (5 * (5 - i))) & 31);
  return `${hrp}1${[...words, ...checksum].map((w) => CHARSET[w]).join('')}`;
}
