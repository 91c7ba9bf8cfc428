/**
 * `packagesync push artifact DIR oci://host/repo:tag`: publishes a package directory as an OCI artifact the
 * way `flux push artifact` does (adapters/oci/push.ts), for a PackageSync with spec.source.oci to follow.
 * Credentials come from $PACKAGESYNC_OCI_CREDS (user:password) or --creds (as flux takes them; the
 * environment keeps them out of shell history and ps); a private CA from --ca-file.
 */
import { readFile } from 'node:fs/promises';
import { Option, type Command } from 'commander';
import { Reason } from '../api/reasons.ts';
import { pushArtifact } from '../adapters/oci/index.ts';
import { parseArtifactTarget } from '../core/oci/reference.ts';
import type { RegistryAuth } from '../core/oci/credentials.ts';
import { CliError, ExitCode } from './exit-codes.ts';

interface PushFlags {
  source?: string;
  revision?: string;
  creds?: string;
  caFile?: string;
  insecure: boolean;
  reproducible: boolean;
  output: 'text' | 'json';
}

/** Failures of the registry itself (unreachable, refused, timed out) exit 3; refused input exits 2. */
const REGISTRY_REASONS: readonly string[] = [Reason.FetchFailed, Reason.AuthenticationFailed, Reason.SourceTimeout];

export function registerPushArtifact(program: Command): void {
  const push = program.command('push').summary('publish a package').description('Publish a package to a registry.');
  push
    .command('artifact')
    .summary('publish a directory as an OCI artifact (as flux push artifact)')
    .description(
      'Packs DIR into a reproducible gzip tarball and pushes it as a Flux OCI artifact (config ' +
        'application/vnd.cncf.flux.config.v1+json, layer application/vnd.cncf.flux.content.v1.tar+gzip) to ' +
        'oci://host/repository:tag. Credentials: $PACKAGESYNC_OCI_CREDS or --creds (user:password). Prints the ' +
        'pushed reference with its digest. Exit 0 pushed, 2 bad input, 3 the registry failed or refused.',
    )
    .argument('<dir>', 'the package directory')
    .argument('<target>', 'oci://host/repository:tag')
    .addOption(new Option('--source <url>', 'the org.opencontainers.image.source annotation (e.g. the git URL)'))
    .addOption(new Option('--revision <rev>', 'the org.opencontainers.image.revision annotation (e.g. main@sha1:…)'))
    .addOption(new Option('--creds <user:password>', 'registry credentials (prefer $PACKAGESYNC_OCI_CREDS)'))
    .addOption(new Option('--ca-file <file>', 'PEM CA bundle the registry certificate must chain to'))
    .addOption(new Option('--insecure', 'plain http (loopback registries only)').default(false))
    .addOption(new Option('--reproducible', 'set the created annotation to 1970-01-01T00:00:00Z').default(false))
    .addOption(new Option('-o, --output <format>', 'output format').choices(['text', 'json']).default('text'))
    .action(async (dir: string, target: string, flags: PushFlags) => {
      const parsed = parseArtifactTarget(target);
      if (!parsed.ok)
        throw new CliError(ExitCode.Invalid, parsed.failure.message.replace('spec.source.oci.url', 'target'));
      if (flags.insecure && !parsed.value.loopback) {
        throw new CliError(
          ExitCode.Invalid,
          `--insecure is allowed only for a loopback registry, not ${parsed.value.host}`,
        );
      }
      const creds = flags.creds ?? process.env.PACKAGESYNC_OCI_CREDS;
      const auth: RegistryAuth = {};
      if (creds !== undefined && creds !== '') {
        const colon = creds.indexOf(':');
        auth.username = colon < 0 ? creds : creds.slice(0, colon);
        auth.password = colon < 0 ? '' : creds.slice(colon + 1);
      }
      if (flags.caFile !== undefined) auth.caCert = await readFile(flags.caFile, 'utf8');
      const pushed = await pushArtifact({
        dir,
        target: parsed.value,
        source: flags.source,
        revision: flags.revision,
        created: flags.reproducible ? '1970-01-01T00:00:00Z' : new Date().toISOString().replace(/\.[0-9]+Z$/, 'Z'),
        auth,
        insecure: flags.insecure,
        signal: AbortSignal.timeout(300_000),
      });
      if (!pushed.ok) {
        const code = REGISTRY_REASONS.includes(pushed.failure.reason) ? ExitCode.Cluster : ExitCode.Invalid;
        throw new CliError(
          code,
          `${pushed.failure.reason}: ${pushed.failure.message.replace(/: fix the Secret named by spec.source.oci.secretRef$/, ': fix --creds')}`,
        );
      }
      process.stdout.write(
        flags.output === 'json' ? `${JSON.stringify(pushed.value, null, 2)}\n` : `pushed ${pushed.value.reference}\n`,
      );
    });
}
