import { describe, expect, it } from 'vitest';
import { checkTarEntries, type TarEntry } from './tar-entries.ts';

const file = (path: string, size = 1): TarEntry => ({ path, type: 'File', size });
const dir = (path: string): TarEntry => ({ path, type: 'Directory', size: 0 });
const sym = (path: string, linkpath: string): TarEntry => ({ path, type: 'SymbolicLink', size: 0, linkpath });
const hard = (path: string, linkpath: string): TarEntry => ({ path, type: 'Link', size: 0, linkpath });
const A = 'oci://r/x';

describe('checkTarEntries', () => {
  it.each<[string, TarEntry[]]>([
    ['files and directories', [dir('deploy/'), file('deploy/a.yaml'), file('./b.yaml')]],
    ['a symlink inside', [file('base/a.yaml'), sym('deploy/a.yaml', '../base/a.yaml')]],
    ['a symlink to a directory inside, not written through', [dir('base'), sym('current', 'base')]],
    ['a hard link inside', [file('a.yaml'), hard('b.yaml', 'a.yaml')]],
    ['a name with two dots that is not ..', [file('a..b.yaml'), file('..hidden')]],
  ])('accepts %s', (_what, entries) => expect(checkTarEntries(entries, A, 1000).ok).toBe(true));

  it.each<[string, TarEntry[], string]>([
    ['a .. segment', [file('../evil.yaml')], 'absolute path or a .. segment'],
    ['a .. in the middle', [file('a/../../evil.yaml')], 'absolute path or a .. segment'],
    ['an absolute path', [file('/etc/cron.d/x')], 'absolute path'],
    ['a Windows drive path', [file('C:/x')], 'absolute path'],
    ['a backslash', [file('a\\..\\x')], 'absolute path'],
    ['a symlink to an absolute path', [sym('passwd.yaml', '/etc/passwd')], 'absolute path'],
    ['a symlink out', [sym('a/passwd.yaml', '../../etc/passwd')], 'points out'],
    ['a hard link out', [hard('x', '../etc/passwd')], 'points out'],
    ['a hard link to an absolute path', [hard('x', '/etc/passwd')], 'absolute path'],
    [
      'a file written through a symlink',
      [sym('d', 'sub'), dir('sub'), file('d/x.yaml')],
      'through or over a symbolic link',
    ],
    ['a symlink dir to . then .. through it', [sym('a', '.'), sym('b', 'a/..')], 'points out'],
    ['a link over an earlier directory', [dir('d'), file('d/x'), sym('d', '.')], 'replaces an earlier entry'],
    ['a file over a symlink', [sym('x.yaml', 'y.yaml'), file('x.yaml')], 'over a symbolic link'],
    ['a device', [{ path: 'dev', type: 'CharacterDevice', size: 0 }], 'type CharacterDevice'],
    ['a fifo', [{ path: 'p', type: 'FIFO', size: 0 }], 'type FIFO'],
  ])('refuses %s (ArtifactUnsafeEntry)', (_what, entries, why) => {
    const r = checkTarEntries(entries, A, 1000);
    expect(r.ok).toBe(false);
    if (!r.ok) {
      expect(r.failure.reason).toBe('ArtifactUnsafeEntry');
      expect(r.failure.message).toContain(A);
      expect(r.failure.message).toContain(why);
      expect(r.failure.terminal).toBe(true);
    }
  });

  it('bounds the unpacked size (ArtifactTooLarge)', () => {
    expect(checkTarEntries([file('a', 600), file('b', 400)], A, 1000).ok).toBe(true);
    const r = checkTarEntries([file('a', 600), file('b', 401)], A, 1000);
    expect(!r.ok && r.failure.reason).toBe('ArtifactTooLarge');
  });
});
