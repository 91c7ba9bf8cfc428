/**
 * hack/image/dockerfile.ts reads the Dockerfile for hack/build-image.sh. What it cannot map onto the
 * Docker-free build must fail the build, naming the line, rather than be left out of one of the images.
 */
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { buildUi } from '../../hack/build-ui.ts';
import { appFiles, binaryName, dockerignore, readImageSpec } from '../../hack/image/dockerfile.ts';

const root = resolve(import.meta.dirname, '../..');
const dockerfile = readFileSync(resolve(root, 'Dockerfile'), 'utf8');
const versions = Object.fromEntries(
  readFileSync(resolve(root, 'hack/versions.env'), 'utf8')
    .split('\n')
    .filter((l) => /^[A-Z_]+=/.test(l))
    .map((l) => l.split('=') as [string, string]),
);
const buildCluster = readFileSync(resolve(root, 'hack/build-cluster.sh'), 'utf8');

describe('the Dockerfile as the image build reads it', () => {
  it('gives the base, packages, user, workdir, copies, env, entrypoint and command', () => {
    const spec = readImageSpec(dockerfile);
    expect(spec.base).toEqual({ image: 'node:24-bookworm-slim', nodeMajor: 24, suite: 'bookworm' });
    expect(spec.npmCiFlags).toEqual(['--omit=dev', '--ignore-scripts']);
    expect(spec.aptPackages).toEqual(['git', 'openssh-client', 'ca-certificates', 'gpg']);
    expect(spec.userRun).toMatch(/^groupadd --gid 65532 nonroot && useradd --uid 65532 /);
    expect(spec.workdir).toBe('/app');
    expect(spec.depsCopy).toEqual({ src: '/app/node_modules', dest: './node_modules' });
    expect(spec.appSources).toEqual(['package.json', 'bin/', 'src/', 'dist/ui/', 'dist/controller/']);
    expect(spec.user).toBe('65532:65532');
    expect(spec.env).toEqual({ HOME: '/tmp', NODE_ENV: 'production' });
    expect(spec.entrypoint.at(-1)).toBe('/app/dist/controller/main.js');
    expect(spec.cmd).toEqual(['controller']);
  });

  it('builds the render tools the controller runs, and copies them where the Docker-free build puts them', () => {
    const { renderTools } = readImageSpec(dockerfile);
    expect(renderTools.tools.map((t) => t.name)).toEqual([
      'kustomize',
      'helm',
      'sops',
      'render-sandbox',
      'render-worker',
      'render-worker-kustomize',
    ]);
    expect(renderTools.dest).toBe('/usr/local/bin');
    expect(renderTools.goImage).toMatch(/^golang:[0-9.]+-bookworm$/);
  });

  // The two images must not disagree on what the tools are: Docker users get the same versions, built from
  // the same modules with the same flags as hack/build-cluster.sh builds for make image and the tests.
  it.each(
    readImageSpec(dockerfile)
      .renderTools.tools.filter((t) => !t.source)
      .map((t) => [t.name, t] as const),
  )("%s: the version is hack/versions.env's and the build is hack/build-cluster.sh's", (_name, tool) => {
    expect(tool.version).toBe(versions[tool.versionArg]);
    const asBuilt = new RegExp(
      `go install -trimpath\\s*\\\\?\\s*-ldflags "([^"]*)"\\s*\\\\?\\s*"${tool.module.replaceAll('.', '\\.')}@\\$${tool.versionArg}"`,
    ).exec(buildCluster);
    expect(asBuilt, `hack/build-cluster.sh installs ${tool.module}@$${tool.versionArg}`).not.toBeNull();
    expect(asBuilt![1]).toBe(tool.ldflags.replaceAll(`\${${tool.versionArg}}`, `$${tool.versionArg}`));
    expect(buildCluster).toContain(`${tool.name.toUpperCase()}_BIN=`);
  });

  it("render-sandbox: built from hack/render-sandbox with hack/build-cluster.sh's flags", () => {
    const sandbox = readImageSpec(dockerfile).renderTools.tools.find((t) => t.name === 'render-sandbox');
    expect(sandbox).toMatchObject({ source: 'hack/render-sandbox', ldflags: '-s -w' });
    expect(buildCluster).toMatch(/go build -trimpath -ldflags "-s -w" -o "\$sandbox_dir\/render-sandbox\.tmp"/);
    expect(buildCluster).toContain('RENDER_SANDBOX_BIN=');
  });

  it("render-worker: built from hack/render-worker with hack/build-cluster.sh's flags (Helm's version string)", () => {
    const worker = readImageSpec(dockerfile).renderTools.tools.find((t) => t.name === 'render-worker');
    expect(worker).toMatchObject({
      source: 'hack/render-worker',
      ldflags: '-s -w -X helm.sh/helm/v4/internal/version.version=${HELM_VERSION}',
    });
    expect(buildCluster).toContain('-ldflags "-s -w -X helm.sh/helm/v4/internal/version.version=$HELM_VERSION"');
    expect(buildCluster).toContain('RENDER_WORKER_BIN=');
    // the Helm SDK the worker embeds is the helm binary's version
    const goMod = readFileSync(resolve(root, 'hack/render-worker/go.mod'), 'utf8');
    expect(goMod).toContain(`helm.sh/helm/v4 ${versions.HELM_VERSION}`);
  });

  it("render-worker-kustomize: the same sources built without Helm (-tags kustomizeonly), with hack/build-cluster.sh's flags", () => {
    const worker = readImageSpec(dockerfile).renderTools.tools.find((t) => t.name === 'render-worker-kustomize');
    expect(worker).toMatchObject({ source: 'hack/render-worker', tags: 'kustomizeonly', ldflags: '-s -w' });
    expect(buildCluster).toMatch(
      /go build -tags kustomizeonly -trimpath -ldflags "-s -w" -o "\$worker_dir\/render-worker-kustomize\.tmp"/,
    );
    expect(buildCluster).toContain('RENDER_WORKER_KUSTOMIZE_BIN=');
  });

  it('names a binary as go install does', () => {
    expect(binaryName('sigs.k8s.io/kustomize/kustomize/v5')).toBe('kustomize');
    expect(binaryName('helm.sh/helm/v4/cmd/helm')).toBe('helm');
    expect(binaryName('github.com/getsops/sops/v3/cmd/sops')).toBe('sops');
  });

  it('takes sources through .dockerignore: no tests, no fixtures; the web UI bundle', async () => {
    await buildUi(); // as hack/build-image.sh does before reading the files
    const files = appFiles(root, readImageSpec(dockerfile));
    expect(files).toContain('src/main.ts');
    // where the controller's --ui-address looks for it (src/cli/ui/command.ts: UI_ASSETS_DIR, /app/dist/ui)
    expect(files).toEqual(expect.arrayContaining(['dist/ui/app.js', 'dist/ui/app.css']));
    expect(files).toContain('bin/packagesync.js');
    expect(files.filter((f) => f.endsWith('.test.ts') || f.includes('/testdata/'))).toEqual([]);
  });

  it.each([
    [
      'a RUN it does not know',
      dockerfile.replace('USER 65532:65532', 'RUN chmod -R 777 /app\nUSER 65532:65532'),
      /line \d+: .*RUN chmod/,
    ],
    [
      'an instruction it does not know',
      dockerfile.replace('USER 65532:65532', 'EXPOSE 8080\nUSER 65532:65532'),
      /EXPOSE/,
    ],
    [
      'a shell-form ENTRYPOINT',
      dockerfile.replace(/^ENTRYPOINT .*$/m, 'ENTRYPOINT node /app/src/main.ts'),
      /exec \(JSON array\) form/,
    ],
    [
      'a COPY to another path',
      dockerfile.replace('COPY src/ ./src/', 'COPY src/ ./lib/'),
      /keep src\/ at its own path/,
    ],
    [
      'a base other than node:<major>-<suite>-slim',
      dockerfile.replace('FROM node:24-bookworm-slim\n', 'FROM alpine\n'),
      /node:<major>/,
    ],
    [
      'a render tool built but not copied into the final image',
      dockerfile.replace('/out/kustomize /out/helm /out/sops', '/out/kustomize /out/sops'),
      /exactly the tools built there \(kustomize, helm, sops, render-sandbox, render-worker, render-worker-kustomize\)/,
    ],
    [
      'a render tool built some other way',
      dockerfile.replace(/^RUN go install (.*helm.*)$/m, 'RUN GOFLAGS=-tags=x go install $1'),
      /line \d+: the render-tools stage may only RUN go install/,
    ],
    [
      'a render tool whose version has no ARG',
      dockerfile.replace(/^ARG HELM_VERSION=.*\n/m, ''),
      /no ARG HELM_VERSION/,
    ],
  ])('refuses %s, naming the line', (_what, text, message) => {
    expect(() => readImageSpec(text)).toThrow(message);
  });

  it('lets the controller bundle through .dockerignore (hack/build-image.sh builds it first)', () => {
    const ignored = dockerignore(readFileSync(resolve(root, '.dockerignore'), 'utf8'));
    expect(ignored('dist/controller/main.js')).toBe(false);
    expect(ignored('dist/controller/main.js.map')).toBe(false);
  });

  it('reads .dockerignore as Docker does: later rules win, ! lets a path back in', () => {
    const ignored = dockerignore('**\n!src/\nsrc/**/*.test.ts\n');
    expect(ignored('src/main.ts')).toBe(false);
    expect(ignored('src/core/x.test.ts')).toBe(true);
    expect(ignored('e2e/a.ts')).toBe(true);
  });
});
