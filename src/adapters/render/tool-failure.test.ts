import { describe, expect, it } from 'vitest';
import { describeToolFailure } from './tool-failure.ts';
import { sanitizeStderr } from './run-tool.ts';

const input = { bin: '/usr/local/bin/helm', limits: { timeoutMs: 1000, maxOutputBytes: 1000, maxFiles: 10 } };

describe('describeToolFailure', () => {
  it('a Go stack overflow is "template recursion too deep in <file>", not a stack dump (issue 34)', () => {
    const dump = [
      'runtime: goroutine stack exceeds 1000000000-byte limit',
      'runtime: sp=0xc0200e0390 stack=[0xc0200e0000, 0xc0400e0000]',
      'fatal error: stack overflow',
      '',
      'runtime stack:',
      'runtime.throw({0x2a3e0d1?, 0x0?})',
      'goroutine 1 [running]:',
      'text/template.(*state).walk(0xc000,...)',
    ].join('\n');
    const r = describeToolFailure(
      'helm',
      'helm template app',
      { ok: false, kind: 'exit', exitCode: 2, stderr: sanitizeStderr(dump, []) },
      input,
    );
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.failure.message).toBe(
      'helm template app failed: template recursion too deep in app/templates; a template includes itself without end, stop the recursion',
    );
  });

  it('an out-of-memory death names the limit', () => {
    const r = describeToolFailure(
      'helm',
      'helm template app',
      { ok: false, kind: 'exit', exitCode: 2, stderr: 'fatal error: runtime: out of memory' },
      input,
    );
    expect(!r.ok && r.failure.message).toBe(
      "helm template app ran out of memory (the render's limit is 1024 MiB of address space) and was stopped; make the package smaller",
    );
  });
});
