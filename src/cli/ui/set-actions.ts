/**
 * A person's decisions on a rollout, from the web UI: approve the wave a set waits on (packagesync.io/approve) and
 * resume a held rollout (packagesync.io/resume), each `<wave>@<commit>:<who>` as the CLI writes it
 * (approvalAnnotation, core/rollout/step.ts) with who = the viewer as the API server named them. The patch is made
 * with the viewer's own credentials, so the API server decides (a Role without `patch` on packagesyncsets gets
 * its Forbidden); each one done is an Event on the set naming the user (docs/adr/0045).
 */
import { KubeApiError } from '../../adapters/kube/client.ts';
import type { PackageSyncs } from '../../adapters/kube/packagesyncs.ts';
import {
  APPROVE_ANNOTATION,
  RESUME_ANNOTATION,
  setCollectionPath,
  type PackageSyncSet,
} from '../../api/packagesyncset.ts';
import { approvalAnnotation } from '../../core/rollout/step.ts';
import { resumeAnnotation } from '../../core/rollout/resume.ts';
import type { Cluster } from '../cluster.ts';
import type { ActionResult } from './api-types.ts';
import type { SetAction } from './set-types.ts';
import { approveRefusal, resumeRefusal } from './set-view.ts';

export interface SetActionRequest {
  namespace: string;
  name: string;
  action: SetAction;
  /** The wave and revision the page showed: acted on only while they are still the ones waiting (set-view.ts). */
  wave: string;
  revision: string;
}

/**
 * The API server's name for the user, on one line (the annotation is read as one), or nothing when it would not say
 * (the gate then records `unknown`).
 */
const who = (user: string) => (user === 'unknown user' ? undefined : user.replace(/\s+/g, ' ').trim() || undefined);

export async function performSetAction(
  cluster: Cluster,
  /** Writes the events, as component packagesync-ui. */
  recorder: PackageSyncs,
  user: string,
  req: SetActionRequest,
): Promise<{ status: number; result: ActionResult }> {
  const path = `${setCollectionPath(req.namespace)}/${encodeURIComponent(req.name)}`;
  let patched: PackageSyncSet;
  let value: string;
  try {
    const current = await cluster.client.request<PackageSyncSet>('GET', path);
    const refused =
      req.action === 'approve'
        ? approveRefusal(current, req.wave, req.revision)
        : resumeRefusal(current, req.wave, req.revision);
    if (refused) return { status: 409, result: { ok: false, message: refused } };
    value =
      req.action === 'approve'
        ? approvalAnnotation(req.wave, current.status!.revision!, who(user))
        : resumeAnnotation(current.status ?? {}, req.wave, current.status!.revision!, who(user));
    const key = req.action === 'approve' ? APPROVE_ANNOTATION : RESUME_ANNOTATION;
    patched = await cluster.client.request<PackageSyncSet>('PATCH', path, {
      contentType: 'application/merge-patch+json',
      body: { metadata: { annotations: { [key]: value } } },
    });
  } catch (e) {
    if (e instanceof KubeApiError)
      return { status: e.status, result: { ok: false, message: `${e.reason}: ${e.message}` } };
    throw e;
  }
  const revision = patched.status?.revision ?? req.revision;
  const done = req.action === 'approve' ? `wave ${req.wave} approved` : `wave ${req.wave} resumed`;
  // best effort (the user may not create events): the annotation itself is what counts
  await recorder.event(
    patched,
    'Normal',
    req.action === 'approve' ? 'WaveApproved' : 'RolloutResumed',
    `${done} for revision ${revision} by ${user} in packagesync ui (${value})`,
  );
  return { status: 200, result: { ok: true, message: `PackageSyncSet ${req.namespace}/${req.name}: ${done}` } };
}
