/**
 * Resuming a held rollout (docs/adr/0042): a person annotates the set packagesync.io/resume=<wave>@<revision>
 * [:<who>] naming the wave that stopped it and the held revision. The wave goes on from where it stood: its
 * healthy targets stay, the others get a new progress deadline, its gates are checked again (a Job gate runs a new
 * Job: the attempt names it). Each annotation value is acted on once (Flux's requestedAt / lastHandled pattern),
 * so a wave that fails again holds again instead of resuming in a loop.
 */
import type { SetStatus, TargetStatus, WaveStatus } from '../../api/packagesyncset.ts';
import { approvalAnnotation } from './gates.ts';
import { sameRevision } from './observe.ts';

export interface Resume {
  wave: string;
  revision: string;
  by?: string;
  /** The annotation's whole value: recorded as lastHandledResume. */
  value: string;
}

/** Mutates status, waves and targets when `resume` applies to the rollout held now; returns whether it did. */
export function resumeHeld(
  status: SetStatus,
  waves: WaveStatus[],
  targets: Map<string, TargetStatus>,
  resume: Resume,
  now: number,
): boolean {
  if (status.phase !== 'Holding' || resume.value === status.lastHandledResume) return false;
  const held = status.blockedBy?.wave;
  if (resume.wave !== held || !sameRevision(resume.revision, status.revision)) return false;
  const wave = waves.find((w) => w.name === held);
  if (!wave) return false;
  const at = new Date(now).toISOString();
  // health as the held status recorded it (the step recomputes it after this)
  const healthy = new Set((status.targets ?? []).filter((t) => t.health === 'Healthy').map((t) => t.name));
  status.lastHandledResume = resume.value;
  delete status.failedRevision;
  delete status.blockedBy;
  delete status.completedAt;
  status.phase = 'Progressing';
  status.message = `wave ${held} resumed by ${resume.by ?? 'unknown'}`;
  wave.phase = 'Progressing';
  wave.resumedBy = resume.by ?? 'unknown';
  wave.resumedAt = at;
  wave.attempt = (wave.attempt ?? 0) + 1;
  delete wave.healthyAt;
  delete wave.completedAt;
  // targets of the wave that are not healthy on the revision get a fresh progress deadline from now
  for (const t of targets.values())
    if (t.wave === held && sameRevision(t.revision, status.revision) && !healthy.has(t.name)) t.startedAt = at;
  return true;
}

/**
 * The resume annotation a person writes for the held `wave`, as `<wave>@<commit>:<who>`, the CLI and the web UI
 * alike (docs/adr/0045). The controller acts on each value once, so when this very value was the last one handled
 * (the same person resuming the same wave of the same revision after it held again) the whole revision is written
 * instead of its commit: the same decision, as a value not yet handled (parseResume reads both, sameRevision
 * matches them). Each next value thus differs from the last one handled.
 */
export function resumeAnnotation(
  status: Pick<SetStatus, 'lastHandledResume'>,
  wave: string,
  revision: string,
  who?: string,
): string {
  const short = approvalAnnotation(wave, revision, who);
  return short !== status.lastHandledResume ? short : `${wave}@${revision}${who ? `:${who}` : ''}`;
}
