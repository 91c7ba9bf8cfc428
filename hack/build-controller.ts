/**
 * Bundles the controller (src/main.ts and every module it imports from src/) into dist/controller/main.js with
 * esbuild: the image runs that file (docs/adr/0052), so node strips no TypeScript at run time and loads one
 * module instead of ~500. The dependencies stay in node_modules, imported as they are. The same sources give
 * the same bytes (the image's input digest relies on it). A source map beside it names the src/ lines
 * (`node --enable-source-maps` reads it; off by default, as it costs memory).
 *
 *   node hack/build-controller.ts [outdir]   default dist/controller
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeOutputs } from './write-outputs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

export async function buildController(outdir = `${root}/dist/controller`): Promise<void> {
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: [{ in: 'src/main.ts', out: 'main' }],
    outdir,
    bundle: true,
    packages: 'external',
    platform: 'node',
    format: 'esm',
    target: 'node24',
    // class and function names as written: logs and errors name them
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  writeOutputs(outputFiles);
}

if (import.meta.url === `file://${process.argv[1]}`) await buildController(process.argv[2]);
