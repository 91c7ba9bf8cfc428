import { gzipSync } from 'node:zlib';

/**
 * A gzip ustar archive built by hand: node-tar and `helm package` refuse to write the unsafe entries (`..`,
 * absolute paths, links out) the hostile-archive tests need (e2e/chart-source, e2e/oci-source).
 */
export function tarball(entries: { name: string; content?: string; type?: '0' | '1' | '2'; link?: string }[]): Buffer {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const body = Buffer.from(e.content ?? '');
    const h = Buffer.alloc(512);
    h.write(e.name, 0, 100);
    h.write('0000644\0', 100);
    h.write('0000000\0', 108);
    h.write('0000000\0', 116);
    h.write(`${body.length.toString(8).padStart(11, '0')}\0`, 124);
    h.write('00000000000\0', 136);
    h.write('        ', 148);
    h.write(e.type ?? '0', 156);
    h.write(e.link ?? '', 157, 100);
    h.write('ustar\x0000', 257);
    let sum = 0;
    for (const b of h) sum += b;
    h.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148);
    blocks.push(h, body, Buffer.alloc((512 - (body.length % 512)) % 512));
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}
