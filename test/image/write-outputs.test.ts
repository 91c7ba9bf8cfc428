import { mkdtemp, readFile, readdir, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeOutputs } from '../../hack/write-outputs.ts';

describe('writeOutputs: bundles written whole, and only when they changed', () => {
  it('writes new files, leaves identical ones untouched, replaces changed ones, and leaves nothing aside', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ps-outputs-'));
    try {
      const file = join(dir, 'sub/app.js');
      const bytes = (s: string) => new TextEncoder().encode(s);
      writeOutputs([{ path: file, contents: bytes('one') }]);
      expect(await readFile(file, 'utf8')).toBe('one');
      const first = await stat(file);
      writeOutputs([{ path: file, contents: bytes('one') }]);
      expect((await stat(file)).ino).toBe(first.ino); // the same file: not rewritten
      writeOutputs([{ path: file, contents: bytes('two') }]);
      expect(await readFile(file, 'utf8')).toBe('two');
      expect((await stat(file)).ino).not.toBe(first.ino); // a new file renamed over it, never truncated in place
      expect(await readdir(join(dir, 'sub'))).toEqual(['app.js']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
