/**
 * The Dockerfile as the one source of truth for the image: hack/build-image.sh builds the same image
 * without Docker (mmdebstrap + umoci), and takes everything it may disagree on from here — the Debian
 * suite and Node major of the base, the Debian packages, the user's RUN line, the render tools (which,
 * from which Go module, at which version, with which flags, and where they land), WORKDIR, the COPY lines
 * through .dockerignore, USER, ENV, ENTRYPOINT and CMD. An instruction this reader does not know fails
 * the build, naming the line, instead of being silently left out of one of the two images.
 *
 *   node hack/image/dockerfile.ts spec               the image spec as JSON (for build-image.sh)
 *   node hack/image/dockerfile.ts stage-app <dest>   copy the final stage's COPY sources into <dest>/<workdir>
 *   node hack/image/dockerfile.ts app-files          the files stage-app copies, one a line (for the input digest)
 */
import { cpSync, mkdirSync, readFileSync, readdirSync, statSync } from 'node:fs';
import { join, matchesGlob, relative, resolve } from 'node:path';

export interface ImageSpec {
  /** `FROM node:<major>-<suite>-slim` of the final stage. */
  base: { image: string; nodeMajor: number; suite: string };
  /** The deps stage's `npm ci` flags (`--omit=dev --ignore-scripts`). */
  npmCiFlags: string[];
  /** Lock-file inputs of the deps stage. */
  depsFiles: string[];
  /** Debian packages of the final stage's `apt-get install`. */
  aptPackages: string[];
  /** The final stage's RUN line that creates the user (groupadd/useradd), run as-is in the base. */
  userRun: string;
  workdir: string;
  /** The render-tools stage: Go-built binaries copied into the final image. */
  renderTools: RenderTools;
  /** `COPY --from=deps <src> <dest>`: the dependencies' destination, relative to workdir. */
  depsCopy: { src: string; dest: string };
  /** The final stage's other COPY sources, relative to the build context. */
  appSources: string[];
  user: string;
  env: Record<string, string>;
  entrypoint: string[];
  cmd: string[];
}

export interface RenderTool {
  /** The binary's name, as `go install` names it (the module path's last element that is not /vN). */
  name: string;
  /** The Go package `go install` builds, without the version. */
  module: string;
  /** The ARG holding its version (`${KUSTOMIZE_VERSION}`) and that ARG's value. */
  versionArg: string;
  version: string;
  /** The `-ldflags` value with the version ARG left as `${NAME}`. */
  ldflags: string;
  /** A tool built from this repository (`COPY <dir>/ /src/<name>/` + `go build`): that directory; no version. */
  source?: string;
  /** `go build -tags <tags>` (a tool built from this repository): its build tags. */
  tags?: string;
}

export interface RenderTools {
  /** `FROM golang:<go>-<suite> AS render-tools`. */
  goImage: string;
  tools: RenderTool[];
  /** Where the final stage's `COPY --from=render-tools` puts them. */
  dest: string;
}

interface Instruction {
  line: number;
  op: string;
  args: string;
}

export class DockerfileError extends Error {}

/** Instructions with continuation lines joined; comments and blank lines dropped. */
export function instructions(text: string): Instruction[] {
  const out: Instruction[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const start = i;
    let line = lines[i]!.trim();
    if (!line || line.startsWith('#')) continue;
    while (line.endsWith('\\') && i + 1 < lines.length) {
      i++;
      const next = lines[i]!.trim();
      if (next.startsWith('#')) continue;
      line = `${line.slice(0, -1).trimEnd()} ${next}`;
    }
    const [op, ...rest] = line.split(/\s+/);
    out.push({ line: start + 1, op: op!.toUpperCase(), args: rest.join(' ') });
  }
  return out;
}

function fail(ins: Instruction, why: string): never {
  throw new DockerfileError(
    `Dockerfile line ${ins.line}: ${why} (${ins.op} ${ins.args}); hack/image/dockerfile.ts must learn it`,
  );
}

function jsonArray(ins: Instruction): string[] {
  try {
    const v = JSON.parse(ins.args) as unknown;
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
  } catch {
    // falls through to the failure below
  }
  fail(ins, 'only the exec (JSON array) form is understood');
}

function parseEnv(ins: Instruction, env: Record<string, string>): void {
  for (const pair of ins.args.split(/\s+/)) {
    const eq = pair.indexOf('=');
    if (eq <= 0 || /["'$]/.test(pair)) fail(ins, 'only unquoted KEY=value pairs are understood');
    env[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
}

/** The Dockerfile's three stages (deps, render-tools, then the final one) as an image spec. */
export function readImageSpec(text: string): ImageSpec {
  const all = instructions(text);
  const froms = all.filter((i) => i.op === 'FROM');
  if (froms.length !== 3)
    throw new DockerfileError(`Dockerfile: expected three stages (deps, render-tools, final), found ${froms.length}`);
  const [deps, tools, final] = [0, 1, 2].map((n) =>
    all.slice(all.indexOf(froms[n]!), n < 2 ? all.indexOf(froms[n + 1]!) : undefined),
  ) as [Instruction[], Instruction[], Instruction[]];

  const spec: Partial<ImageSpec> & { env: Record<string, string>; appSources: string[] } = { env: {}, appSources: [] };
  const renderTools = readRenderTools(tools);
  let toolsCopied: string[] | undefined;
  for (const ins of deps) {
    switch (ins.op) {
      case 'FROM':
        if (!/ AS deps$/i.test(ins.args)) fail(ins, 'the first stage must be named deps');
        break;
      case 'WORKDIR':
        break;
      case 'COPY':
        spec.depsFiles = ins.args.split(/\s+/).slice(0, -1);
        break;
      case 'RUN': {
        const m = /^npm ci((?: --[a-z-=]+)*)(?: && npm cache clean --force)?$/.exec(ins.args);
        if (!m) fail(ins, 'the deps stage may only run `npm ci <flags>`');
        spec.npmCiFlags = m[1]!.trim().split(/\s+/);
        break;
      }
      default:
        fail(ins, 'unknown instruction in the deps stage');
    }
  }
  for (const ins of final) {
    switch (ins.op) {
      case 'FROM': {
        const m = /^node:(\d+)-([a-z]+)-slim$/.exec(ins.args);
        if (!m) fail(ins, 'the final stage must start FROM node:<major>-<debian suite>-slim');
        spec.base = { image: ins.args, nodeMajor: Number(m[1]), suite: m[2]! };
        break;
      }
      case 'RUN': {
        const apt =
          /^apt-get update && apt-get install -y --no-install-recommends ([a-z0-9.+ -]+?) && rm -rf \/var\/lib\/apt\/lists\/\*$/.exec(
            ins.args,
          );
        if (apt) spec.aptPackages = apt[1]!.split(/\s+/);
        else if (/^groupadd [^&;|`$]+ && useradd [^&;|`$]+$/.test(ins.args)) spec.userRun = ins.args;
        else fail(ins, 'the final stage may only RUN the apt-get install line and the groupadd && useradd line');
        break;
      }
      case 'WORKDIR':
        spec.workdir = ins.args;
        break;
      case 'COPY': {
        const parts = ins.args.split(/\s+/);
        if (parts[0] === '--from=render-tools') {
          const dest = parts.at(-1)!;
          const sources = parts.slice(1, -1);
          if (!dest.endsWith('/') || sources.some((src) => !src.startsWith('/out/')))
            fail(ins, 'only COPY --from=render-tools /out/<tool>... <dir>/');
          toolsCopied = sources.map((src) => src.slice('/out/'.length));
          renderTools.dest = dest.replace(/\/$/, '');
        } else if (parts[0]?.startsWith('--from=')) {
          if (parts[0] !== '--from=deps' || parts.length !== 3) fail(ins, 'only COPY --from=deps <src> <dest>');
          spec.depsCopy = { src: parts[1]!, dest: parts[2]! };
        } else {
          if (parts.some((p) => p.startsWith('--'))) fail(ins, 'COPY flags are not understood');
          const dest = parts.at(-1)!;
          const sources = parts.slice(0, -1);
          // Every source lands at the same relative path under WORKDIR: `COPY x ./` or `COPY x/ ./x/`.
          for (const src of sources) {
            const expected = sources.length === 1 && src.endsWith('/') ? [`./${src}`, src] : ['./'];
            if (!expected.includes(dest)) fail(ins, `COPY must keep ${src} at its own path under WORKDIR`);
          }
          spec.appSources.push(...sources);
        }
        break;
      }
      case 'USER':
        spec.user = ins.args;
        break;
      case 'ENV':
        parseEnv(ins, spec.env);
        break;
      case 'ENTRYPOINT':
        spec.entrypoint = jsonArray(ins);
        break;
      case 'CMD':
        spec.cmd = jsonArray(ins);
        break;
      default:
        fail(ins, 'unknown instruction in the final stage');
    }
  }
  const built = renderTools.tools.map((t) => t.name);
  if (!toolsCopied || toolsCopied.join(' ') !== built.join(' '))
    throw new DockerfileError(
      `Dockerfile: the final stage must COPY --from=render-tools exactly the tools built there (${built.join(', ')})`,
    );
  spec.renderTools = renderTools;
  for (const key of [
    'base',
    'npmCiFlags',
    'depsFiles',
    'aptPackages',
    'userRun',
    'workdir',
    'depsCopy',
    'user',
    'entrypoint',
    'cmd',
  ] as const) {
    if (spec[key] === undefined) throw new DockerfileError(`Dockerfile: no ${key} found`);
  }
  return spec as ImageSpec;
}

/**
 * The render-tools stage: `FROM golang:<go>-<suite> AS render-tools`, `ARG <NAME>_VERSION=<v>` lines,
 * `ENV CGO_ENABLED=0 GOBIN=/out` and one `go install -trimpath -ldflags "<flags>" <module>@${<ARG>}` per tool.
 */
function readRenderTools(stage: Instruction[]): RenderTools {
  const args: Record<string, string> = {};
  const env: Record<string, string> = {};
  const out: RenderTools = { goImage: '', tools: [], dest: '' };
  const copied: Record<string, string> = {};
  for (const ins of stage) {
    switch (ins.op) {
      case 'FROM': {
        const m = /^(golang:[0-9.]+-[a-z]+) AS render-tools$/i.exec(ins.args);
        if (!m) fail(ins, 'the second stage must be FROM golang:<go>-<suite> AS render-tools');
        out.goImage = m[1]!;
        break;
      }
      case 'ARG': {
        const m = /^([A-Z][A-Z0-9_]*)=(v[0-9][0-9A-Za-z.+-]*)$/.exec(ins.args);
        if (!m) fail(ins, 'only ARG NAME=v<version> is understood in the render-tools stage');
        args[m[1]!] = m[2]!;
        break;
      }
      case 'ENV':
        parseEnv(ins, env);
        break;
      case 'COPY': {
        const m = /^(hack\/[a-z0-9-]+)\/ \/src\/([a-z0-9-]+)\/$/.exec(ins.args);
        if (!m) fail(ins, 'the render-tools stage may only COPY hack/<dir>/ /src/<name>/');
        copied[m[2]!] = m[1]!;
        break;
      }
      case 'RUN': {
        const local =
          /^cd \/src\/([a-z0-9-]+) && go build (?:-tags ([a-z0-9,]+) )?-trimpath -ldflags "([^"]*)" -o \/out\/([a-z0-9-]+) \.$/.exec(
            ins.args,
          );
        if (local) {
          const [, dir, tags, ldflags, name] = local as unknown as [string, string, string | undefined, string, string];
          // the binary is named after its directory, or after it and a suffix (render-worker-kustomize)
          if (copied[dir] === undefined || (dir !== name && !name.startsWith(`${dir}-`)))
            fail(ins, `no COPY hack/${name}/ /src/${name}/ before it`);
          out.tools.push({
            name,
            module: `./${copied[dir]}`,
            versionArg: '',
            version: '',
            ldflags,
            source: copied[dir],
            ...(tags ? { tags } : {}),
          });
          break;
        }
        const m = /^go install -trimpath -ldflags "([^"]*)" ([a-z0-9./-]+)@\$\{([A-Z0-9_]+)\}$/.exec(ins.args);
        if (!m) fail(ins, 'the render-tools stage may only RUN go install -trimpath -ldflags "..." <module>@${ARG}');
        const [, ldflags, module, versionArg] = m as unknown as [string, string, string, string];
        const version = args[versionArg];
        if (version === undefined) fail(ins, `no ARG ${versionArg} before it`);
        out.tools.push({ name: binaryName(module), module, versionArg, version, ldflags });
        break;
      }
      default:
        fail(ins, 'unknown instruction in the render-tools stage');
    }
  }
  if (env.CGO_ENABLED !== '0' || env.GOBIN !== '/out')
    throw new DockerfileError('Dockerfile: the render-tools stage must set ENV CGO_ENABLED=0 GOBIN=/out');
  return out;
}

/** The name `go install` gives a package's binary: its last path element, skipping a major-version suffix. */
export function binaryName(module: string): string {
  const parts = module.split('/');
  const last = parts.at(-1)!;
  return /^v[0-9]+$/.test(last) && parts.length > 1 ? parts.at(-2)! : last;
}

/** .dockerignore as Docker reads it: later patterns win, `!x` lets x back in. */
export function dockerignore(text: string): (path: string) => boolean {
  const rules = text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  return (path) => {
    let ignored = false;
    for (const rule of rules) {
      const negate = rule.startsWith('!');
      const pattern = (negate ? rule.slice(1) : rule).replace(/\/$/, '');
      if (matchesGlob(path, pattern) || matchesGlob(path, `${pattern}/**`)) ignored = !negate;
    }
    return ignored;
  };
}

/** Files of the build context the final stage's COPY lines take, relative to the context, sorted. */
export function appFiles(root: string, spec: ImageSpec): string[] {
  const ignored = dockerignore(readFileSync(join(root, '.dockerignore'), 'utf8'));
  const out: string[] = [];
  const walk = (rel: string): void => {
    const abs = join(root, rel);
    if (statSync(abs).isDirectory()) {
      for (const name of readdirSync(abs)) {
        const child = join(rel, name);
        if (!ignored(child)) walk(child);
      }
    } else out.push(rel);
  };
  for (const src of spec.appSources) {
    const rel = src.replace(/\/$/, '');
    if (ignored(rel)) throw new DockerfileError(`.dockerignore excludes ${rel}, which the Dockerfile copies`);
    walk(rel);
  }
  return out.sort();
}

function main(argv: string[]): void {
  const root = resolve(import.meta.dirname, '../..');
  const spec = readImageSpec(readFileSync(join(root, 'Dockerfile'), 'utf8'));
  const [cmd, dest] = argv;
  if (cmd === 'spec') {
    process.stdout.write(`${JSON.stringify(spec, null, 2)}\n`);
  } else if (cmd === 'app-files') {
    process.stdout.write(
      appFiles(root, spec)
        .map((f) => `${f}\n`)
        .join(''),
    );
  } else if (cmd === 'stage-app' && dest) {
    const workdir = join(dest, spec.workdir);
    for (const file of appFiles(root, spec)) {
      mkdirSync(join(workdir, relative('.', join(file, '..'))), { recursive: true });
      cpSync(join(root, file), join(workdir, file), { preserveTimestamps: false });
    }
  } else {
    throw new DockerfileError('usage: dockerfile.ts spec | app-files | stage-app <dest>');
  }
}

if (import.meta.main) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    process.stderr.write(`[build-image] ${(err as Error).message}\n`);
    process.exit(1);
  }
}
