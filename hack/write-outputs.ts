/**
 * esbuild's output files written as the image build needs them: each file replaced whole (written aside, then
 * renamed), and only when it changed. hack/build-image.sh, the bench and the e2e tests build the same bundles, at
 * times while another reads them, and a reader must never see half a file.
 */
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';

export function writeOutputs(files: readonly { path: string; contents: Uint8Array }[]): void {
  for (const f of files) {
    let same = false;
    try {
      same = readFileSync(f.path).equals(f.contents);
    } catch {
      // not there yet
    }
    if (same) continue;
    mkdirSync(dirname(f.path), { recursive: true });
    const tmp = `${f.path}.${process.pid}.tmp`;
    writeFileSync(tmp, f.contents);
    renameSync(tmp, f.path);
  }
}
