/**
 * `packagesync render DIR`: the objects exactly as the controller would apply them. Offline by default:
 * built-in kinds and the package's own CRDs say which kinds are namespaced. With --kubeconfig, the
 * cluster's discovery answers first, as it does for the controller (it matters only for cluster-scoped
 * custom kinds whose CRD is not in the package).
 */
import { Option, type Command } from 'commander';
import { withCluster } from './cluster.ts';
import { renderDir, type RenderDirOptions } from './local-package.ts';
import { targetNamespaceOption } from './package-plan.ts';
import { emitGoYamlV2 } from '../core/render/goyaml-emit.ts';
import { duplicateKeysMessage } from '../core/render/render.ts';
import { redactSecretValues } from '../core/render/sops.ts';
import { decryptOptions, identitiesFromFile } from './decrypt.ts';
import { substituteOptions, substitutionFromFlags, type SubstituteFlags } from './substitute-flags.ts';

interface RenderFlags extends SubstituteFlags {
  name: string;
  namespace: string;
  targetNamespace?: string;
  output: 'yaml' | 'json';
  kubeconfig?: string;
  ageKeyFile?: string;
  showSecrets?: boolean;
}

export function registerRender(program: Command): void {
  const cmd = program
    .command('render')
    .summary('print the objects of a package directory as they would be applied')
    .description(
      'Print the objects of a package directory exactly as the controller would apply them: owner labels, ' +
        'namespaces and digest annotation set, in apply order. Needs no cluster.',
    )
    .argument('<dir>', 'package directory')
    .addOption(new Option('--name <name>', 'name of the PackageSync that owns the objects').default('cli'))
    .addOption(
      new Option('--namespace <ns>', "the PackageSync's namespace: namespaced objects that name none go there").default(
        'default',
      ),
    )
    .addOption(targetNamespaceOption());
  for (const o of substituteOptions()) cmd.addOption(o);
  for (const o of decryptOptions()) cmd.addOption(o);
  cmd
    .addOption(
      new Option(
        '--show-secrets',
        'with --age-key-file, print the decrypted values of Secrets (without it every Secret value is printed as **redacted**)',
      ).default(false),
    )
    .addOption(new Option('-o, --output <format>', 'output format').choices(['yaml', 'json']).default('yaml'))
    .addOption(
      new Option(
        '--kubeconfig <path>',
        "ask this cluster's discovery which kinds are namespaced, as the controller does (default: offline)",
      ),
    )
    .action(async (dir: string, flags: RenderFlags) => {
      const opts: RenderDirOptions = {
        owner: { name: flags.name, namespace: flags.namespace },
        targetNamespace: flags.targetNamespace,
        allowEmpty: true,
        substitution: await substitutionFromFlags(flags),
        decrypt: await identitiesFromFile(flags.ageKeyFile),
      };
      const { ordered, duplicateKeys } = flags.kubeconfig
        ? await withCluster(flags.kubeconfig, async (cluster) => {
            await cluster.discovery.refresh();
            return renderDir(dir, { ...opts, discovery: cluster.discovery });
          })
        : await renderDir(dir, opts);
      // stderr: the objects on stdout stay a clean stream for kubectl
      if (duplicateKeys) process.stderr.write(`Warning: ${duplicateKeysMessage(duplicateKeys)}\n`);
      // decrypted plaintext reaches the terminal only when asked for
      const hide = opts.decrypt !== undefined && flags.showSecrets !== true;
      const objects = hide ? ordered.map((o) => (o.kind === 'Secret' ? redactSecretValues(o) : o)) : ordered;
      if (flags.output === 'json')
        process.stdout.write(`${JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }, null, 2)}\n`);
      // written as go-yaml writes it (kubectl get -o yaml): every string kubectl would read as something else
      // (`no`, `0755`, `1:30`) is quoted, so piping this into kubectl applies the same values as -o json
      else process.stdout.write(objects.map((o) => `---\n${emitGoYamlV2(o)}`).join(''));
    });
}
