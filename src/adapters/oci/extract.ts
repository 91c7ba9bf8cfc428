import { extract, list } from 'tar';
import { ok, type Result } from '../../core/failure.ts';
import { checkTarEntries, type TarEntry } from '../../core/oci/tar-entries.ts';

/**
 * Unpacks a layer tarball that has already been verified against its digest: first every entry header is
 * read and checked (core/oci/tar-entries.ts: no absolute paths, no `..`, no links out, no devices, a bound on
 * the unpacked size), and only then is anything written. node-tar's own guards stay on underneath (it
 * strips such paths with a warning; `strict` turns that into an error) as a second line.
 */
export async function unpackLayer(
  file: string,
  into: string,
  artifact: string,
  maxUnpackedBytes: number,
): Promise<Result<void>> {
  const entries: TarEntry[] = [];
  await list({
    file,
    strict: true,
    onReadEntry: (e) => {
      entries.push({ path: e.path, type: e.type, size: e.size ?? 0, linkpath: e.linkpath });
    },
  });
  const checked = checkTarEntries(entries, artifact, maxUnpackedBytes);
  if (!checked.ok) return checked;
  await extract({ file, cwd: into, strict: true, preserveOwner: false, noChmod: false });
  return ok(undefined);
}
