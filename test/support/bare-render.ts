/**
 * The pinned binaries run bare — `kustomize build` / `helm template` on a directory, nothing of ours around
 * them (no checks, no scratch view, no sandbox) — with the flags the controller's engines pass: the upstream
 * output the render worker and the subprocess path are compared against (test/render/tools-golden.test.ts,
 * test/render/worker-golden.test.ts, hack/render-golden-public.ts) and the floor bench/render-engines.ts
 * measures them against. One definition, so a flag added to the engines is added to every comparison.
 */
import { execFile } from 'node:child_process';
import { tmpdir } from 'node:os';
import type { HelmCapabilities } from '../../src/adapters/render/helm.ts';
import { defaultToolPaths } from '../../src/config/tool-paths.ts';

export interface BareCommand {
  bin: string;
  args: string[];
  cwd: string;
}

/** `kustomize build` of a directory as the engines build it (the load restrictor is the worker's confined fs). */
export function bareKustomize(dir: string, bin = defaultToolPaths().kustomize): BareCommand {
  return { bin, args: ['build', '--load-restrictor', 'LoadRestrictionsNone', '.'], cwd: dir };
}

export interface BareHelm {
  chartDir: string;
  releaseName?: string;
  namespace?: string;
  includeCRDs?: boolean;
  capabilities?: HelmCapabilities;
  /** Values files, absolute, merged in this order. */
  valuesFiles?: string[];
  bin?: string;
}

/** `helm template NAME . --namespace NS --skip-tests …`, as docs/adr/0011 and 0038 run it. */
export function bareHelm(h: BareHelm): BareCommand {
  const args = ['template', h.releaseName ?? 'web', '.', '--namespace', h.namespace ?? 'prod', '--skip-tests'];
  if (h.includeCRDs !== false) args.push('--include-crds');
  if (h.capabilities) {
    args.push('--kube-version', h.capabilities.kubeVersion);
    for (const api of h.capabilities.apiVersions) args.push('--api-versions', api);
  }
  for (const file of h.valuesFiles ?? []) args.push('--values', file);
  return { bin: h.bin ?? defaultToolPaths().helm, args, cwd: h.chartDir };
}

export interface BareOutcome {
  ok: boolean;
  stdout: string;
  stderr: string;
}

/** Runs a bare command with a bare environment (a throwaway HOME: no user's helm or kustomize config). */
export function runBare(cmd: BareCommand, home = tmpdir()): Promise<BareOutcome> {
  return new Promise((done) =>
    execFile(
      cmd.bin,
      cmd.args,
      {
        cwd: cmd.cwd,
        maxBuffer: 64 << 20,
        encoding: 'utf8',
        env: { PATH: '/usr/bin:/bin', HOME: home },
      },
      (error, stdout, stderr) => done({ ok: !error, stdout, stderr }),
    ),
  );
}
