import { describe, expect, it } from 'vitest';
import { planRunner, type PlanRequest } from './plan-runner.ts';

const request: PlanRequest = { namespace: 'team-a', name: 'web', output: 'text', kubeconfigArgs: [], extraArgs: [] };

/** A child process runner whose plans end when the test says so. */
function heldPlans() {
  const ends: (() => void)[] = [];
  const spawn = () =>
    new Promise<{ code: number; stdout: string; stderr: string }>((resolve) =>
      ends.push(() => resolve({ code: 0, stdout: 'No changes.\n', stderr: '' })),
    );
  return { spawn, endAll: () => ends.splice(0).forEach((end) => end()) };
}

describe('planRunner', () => {
  it("allows two plans at a time per server: a third is refused with 429, another server's is not", async () => {
    const a = heldPlans();
    const b = heldPlans();
    const [runA, runB] = [planRunner(a.spawn), planRunner(b.spawn)];
    const first = [runA(request), runA(request)];
    expect(await runA(request)).toMatchObject({ status: 429 });
    // the counter was once one per process: a busy server refused every other server's viewers
    const other = runB(request);
    a.endAll();
    b.endAll();
    expect(await Promise.all([...first, other])).toEqual(
      Array.from({ length: 3 }, () => ({ status: 200, result: { exitCode: 0, output: 'No changes.\n' } })),
    );
    // and a finished plan gives its place back
    const again = runA(request);
    a.endAll();
    expect(await again).toMatchObject({ status: 200 });
  });
});
