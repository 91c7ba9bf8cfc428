/** Runs the check of one http, job or metric gate the rollout step waits on (docs/adr/0042). */
import type { PackageSyncSet } from '../../api/packagesyncset.ts';
import type { KubeClient } from '../../adapters/kube/client.ts';
import type { GateCheck, GateResult } from '../../core/rollout/gates.ts';
import { checkHttpGate } from './http-gate.ts';
import { checkJobGate } from './job-gate.ts';
import { checkMetricGate } from './metric-gate.ts';

export interface GateCheckContext {
  client: KubeClient;
  set: PackageSyncSet;
  readSecret: (namespace: string, name: string) => Promise<Record<string, string> | undefined>;
  serviceAccount?: string;
  allowHttp: boolean;
  signal?: AbortSignal;
}

export async function checkGate(check: GateCheck, ctx: GateCheckContext): Promise<GateResult> {
  const { gate } = check;
  const { namespace, name, uid } = ctx.set.metadata;
  if (gate.http) return checkHttpGate(gate.http.url, gate.http.expectStatus, ctx);
  if (gate.job)
    return checkJobGate(
      ctx.client,
      { name, namespace, uid: uid ?? '' },
      { set: name, wave: check.wave, gate: gate.name, revision: check.revision, attempt: check.attempt },
      gate.job,
      {
        ...(ctx.serviceAccount ? { serviceAccount: ctx.serviceAccount } : {}),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      },
    );
  if (gate.metric) {
    let token: string | undefined;
    if (gate.metric.secretRef) {
      const data = await ctx.readSecret(namespace, gate.metric.secretRef.name).catch(() => undefined);
      token = data?.token;
      if (!token) return { passed: false, message: `Secret ${gate.metric.secretRef.name} has no key token` };
    }
    return checkMetricGate(gate.metric, {
      allowHttp: ctx.allowHttp,
      ...(token ? { token } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  }
  return { passed: false, message: 'not a checked gate' };
}
