/**
 * Builds the web UI (web/) into dist/ui/app.js and app.css with esbuild: `npm run build:ui`, run by the Makefile
 * before anything that serves it. Nothing is fetched at run time and nothing built is committed (docs/adr/0036).
 */
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { writeOutputs } from './write-outputs.ts';

const root = fileURLToPath(new URL('..', import.meta.url));

export async function buildUi(outdir = `${root}/dist/ui`): Promise<void> {
  const { outputFiles } = await build({
    absWorkingDir: root,
    entryPoints: [
      { in: 'web/main.tsx', out: 'app' },
      { in: 'web/style.css', out: 'app' },
    ],
    outdir,
    bundle: true,
    minify: true,
    format: 'esm',
    target: 'es2022',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'none',
    logLevel: 'warning',
    write: false,
  });
  writeOutputs(outputFiles);
}

if (import.meta.url === `file://${process.argv[1]}`) await buildUi();
