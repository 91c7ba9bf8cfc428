/** The everyday CLI, on the same engine as the controller. */
import { readFile, readdir, stat } from 'node:fs/promises';
import { join, relative, sep } from 'node:path';
import type { Command } from 'commander';
import { stringify } from 'yaml';
import { renderPackage } from '../core/render/index.ts';

export function registerCliCommands(program: Command): void {
  program
    .command('render')
    .description('Print the objects of a package directory exactly as they would be applied.')
    .argument('<dir>', 'package directory')
    .option('--name <name>', 'PackageSync name stamped as owner', 'cli')
    .option('--namespace <ns>', 'namespace of the PackageSync (default for namespaced objects)', 'default')
    .option('--target-namespace <ns>', 'spec.targetNamespace')
    .option('-o, --output <format>', 'yaml or json', 'yaml')
    .action(
      async (dir: string, opts: { name: string; namespace: string; targetNamespace?: string; output: string }) => {
        const files = await readManifestFiles(dir);
        const r = renderPackage(files, {
          owner: { name: opts.name, namespace: opts.namespace },
          defaultNamespace: opts.namespace,
          targetNamespace: opts.targetNamespace,
          allowEmpty: true,
        });
        if (!r.ok) {
          console.error(`${r.failure.reason}: ${r.failure.message}`);
          process.exitCode = 2;
          return;
        }
        if (opts.output === 'json')
          console.log(JSON.stringify({ apiVersion: 'v1', kind: 'List', items: r.value.objects }, null, 2));
        else process.stdout.write(r.value.objects.map((o) => `---\n${stringify(o)}`).join(''));
      },
    );
}

/** Local files for the CLI: .yaml/.yml/.json under dir, recursively. */
async function readManifestFiles(dir: string): Promise<{ path: string; content: string }[]> {
  const out: { path: string; content: string }[] = [];
  const walk = async (d: string): Promise<void> => {
    for (const entry of await readdir(d, { withFileTypes: true })) {
      if (entry.name === '.git') continue;
      const full = join(d, entry.name);
      if (entry.isDirectory()) await walk(full);
      else if (/\.(ya?ml|json)$/.test(entry.name) && (await stat(full)).isFile()) {
        out.push({ path: relative(dir, full).split(sep).join('/'), content: await readFile(full, 'utf8') });
      }
    }
  };
  await walk(dir);
  return out;
}
