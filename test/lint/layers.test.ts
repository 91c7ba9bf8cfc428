/**
 * `make lint` runs dependency-cruiser with .dependency-cruiser.mjs. These tests plant the mistakes the layer
 * rules exist for in a scratch tree shaped like src/ and check that the same configuration refuses them,
 * and that the real src/ passes.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { cruise, type IConfiguration, type ICruiseOptions, type IViolation } from 'dependency-cruiser';
import { afterEach, describe, expect, it } from 'vitest';

const root = resolve(import.meta.dirname, '../..');
// the very configuration `make lint` uses (a path in a variable: TypeScript does not type an .mjs file)
const configFile = join(root, '.dependency-cruiser.mjs');
const config = ((await import(configFile)) as { default: IConfiguration }).default;
let scratch: string | undefined;

afterEach(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
  scratch = undefined;
});

async function violations(baseDir: string, files: Record<string, string>): Promise<IViolation[]> {
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(baseDir, path)), { recursive: true });
    writeFileSync(join(baseDir, path), content);
  }
  return run(baseDir);
}

async function run(baseDir: string): Promise<IViolation[]> {
  const options: ICruiseOptions = {
    ...config.options,
    baseDir,
    tsConfig: undefined,
    ruleSet: { forbidden: config.forbidden },
    validate: true,
  };
  const result = await cruise(['src'], options);
  if (typeof result.output === 'string') throw new Error('expected JSON output');
  return result.output.summary.violations;
}

const rules = (vs: IViolation[]) => [...new Set(vs.map((v) => v.rule.name))].sort();

describe('layer rules', () => {
  it('pass on the real src/', async () => {
    expect(rules(await run(root))).toEqual([]);
  });

  it('refuse an import cycle', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'layers-'));
    const vs = await violations(scratch, {
      'src/engine/a.ts': "import { b } from './b.ts';\nexport const a = () => b;\n",
      'src/engine/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\n",
    });
    expect(rules(vs)).toEqual(['no-cycles']);
  });

  it('refuse an upward import: core reaching into the engine', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'layers-'));
    const vs = await violations(scratch, {
      'src/core/decide.ts': "import type { Run } from '../engine/run.ts';\nexport const decide = (r: Run) => r;\n",
      'src/engine/run.ts': 'export interface Run { id: string }\n',
    });
    expect(rules(vs)).toEqual(['core-imports-upward']);
  });

  it('refuse the api layer importing core', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'layers-'));
    const vs = await violations(scratch, {
      'src/api/schema.ts': "import { x } from '../core/x.ts';\nexport const y = x;\n",
      'src/core/x.ts': 'export const x = 1;\n',
    });
    expect(rules(vs)).toEqual(['api-imports-upward']);
  });

  it('refuse I/O in core', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'layers-'));
    const vs = await violations(scratch, {
      'src/core/read.ts': "import { readFileSync } from 'node:fs';\nexport const read = () => readFileSync('x');\n",
    });
    expect(rules(vs)).toContain('core-is-pure-builtins');
  });

  it('keep the controller and the CLI apart', async () => {
    scratch = mkdtempSync(join(tmpdir(), 'layers-'));
    const vs = await violations(scratch, {
      'src/cli/x.ts': "import { m } from '../controller/m.ts';\nexport const x = m;\n",
      'src/controller/m.ts': 'export const m = 1;\n',
    });
    expect(rules(vs)).toContain('controller-and-cli-apart');
  });
});
