import { execFile } from 'node:child_process';
import { defaultToolPaths } from '../../config/tool-paths.ts';

/**
 * The kernel half of the render sandbox (docs/adr/0033): every render tool runs under hack/render-sandbox,
 * which applies Landlock (read the checkout and the run's files, write its private dir, no TCP) and
 * RLIMIT_AS + GOMEMLIMIT, then execs the tool. Configured once at start-up (the controller's flags);
 * the CLI and tests use the defaults.
 */

/** Address space of one render subprocess. A Go program reserves ~0.6 GiB before its heap (page
 * summaries, arenas), so 1 GiB leaves a heap of ~0.4 GiB (GOMEMLIMIT: a quarter of it), under the pod's 512 MiB. */
export const DEFAULT_RENDER_MAX_MEMORY = 1 << 30;

export interface RenderSandbox {
  bin: string;
  maxMemoryBytes: number;
}

let configured: RenderSandbox | undefined;

export function configureRenderSandbox(sandbox: Partial<RenderSandbox>): void {
  configured = { ...renderSandbox(), ...sandbox };
  probed = undefined;
}

export function renderSandbox(): RenderSandbox {
  configured ??= { bin: defaultToolPaths().sandbox, maxMemoryBytes: DEFAULT_RENDER_MAX_MEMORY };
  return configured;
}

/** What the kernel enforces: enforced (Landlock ABI ≥ 4: files and TCP), partial (files only), unavailable, missing (no launcher). */
export type LandlockState = 'enforced' | 'partial' | 'unavailable' | 'missing';

export interface SandboxProbe {
  landlock: LandlockState;
  abi: number;
  bin: string;
}

let probed: Promise<SandboxProbe> | undefined;

/** The launcher's own report of the kernel's Landlock ABI (`render-sandbox --probe`), asked once. */
export function probeRenderSandbox(): Promise<SandboxProbe> {
  const { bin } = renderSandbox();
  probed ??= new Promise((resolve) => {
    execFile(bin, ['--probe'], { timeout: 10_000, env: {} }, (error, stdout) => {
      if (error) return resolve({ landlock: 'missing', abi: 0, bin });
      try {
        const report = JSON.parse(stdout) as { abi?: unknown; landlock?: unknown };
        const landlock = ['enforced', 'partial', 'unavailable'].includes(report.landlock as string)
          ? (report.landlock as LandlockState)
          : 'unavailable';
        resolve({ landlock, abi: typeof report.abi === 'number' ? report.abi : 0, bin });
      } catch {
        resolve({ landlock: 'missing', abi: 0, bin });
      }
    });
  });
  return probed;
}

/** A line for logs and `packagesync version`. */
export function describeSandbox(probe: SandboxProbe): string {
  switch (probe.landlock) {
    case 'enforced':
      return `render sandbox: Landlock ABI ${probe.abi} enforced (reads confined to the checkout, writes to scratch, TCP denied)`;
    case 'partial':
      return `render sandbox: Landlock ABI ${probe.abi} confines files only (TCP needs ABI 4); the render checks still apply`;
    case 'unavailable':
      return 'render sandbox: this kernel has no Landlock; renders are confined by the checks and the memory bound only';
    case 'missing':
      return `render sandbox: the launcher ${probe.bin} is missing; renders fail until it is built (hack/build-cluster.sh render-sandbox)`;
  }
}
