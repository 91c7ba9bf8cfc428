/**
 * status.cause: the chain from the object that ended a health wait down to its first real cause, bounded so
 * one verbose Pod message cannot bloat the PackageSync (kubectl describe shows it as is).
 */
import type { CauseLink } from './cause-chain.ts';

/** Links kept in status: a workload, its ReplicaSet and the Pod need 3; room for a longer owner chain. */
export const MAX_CAUSE_LINKS = 5;
/** Characters kept of each link's message (the kubelet's texts are one sentence; image names can be long). */
export const MAX_CAUSE_MESSAGE = 256;

/**
 * At most MAX_CAUSE_LINKS links, each message at most MAX_CAUSE_MESSAGE characters on one line. A longer chain
 * keeps its first link (what the package holds) and its last ones (the cause).
 */
export function boundedCause(links: readonly CauseLink[]): CauseLink[] {
  const kept = links.length <= MAX_CAUSE_LINKS ? links : [links[0]!, ...links.slice(-(MAX_CAUSE_LINKS - 1))];
  return kept.map((l) => (l.message === undefined ? { ...l } : { ...l, message: clip(l.message) }));
}

/** `Pod/team-a/web-5d9f-abcde: ImagePullBackOff: Back-off pulling image "x"`: the chain's last link. */
export function rootCauseText(links: readonly CauseLink[]): string | undefined {
  const root = links.at(-1);
  if (!root) return undefined;
  const name = [root.kind, root.namespace, root.name].filter(Boolean).join('/');
  const text = root.message ?? root.reason;
  return text ? `${name}: ${text}` : name;
}

/**
 * The Ready message with the first cause in it: unchanged when the chain is the failed object alone (the
 * health message names it and says why) or the message already names the cause's object (a workload's
 * health message quotes its Pod), else `…; cause: Pod/ns/name: reason: message`, the message shortened so
 * that the cause fits in `max` characters.
 */
export function withFirstCause(message: string, links: readonly CauseLink[], max: number): string {
  const root = links.at(-1);
  const text = rootCauseText(links);
  if (!root || !text || links.length < 2 || message.includes(root.name)) return message;
  const suffix = `; cause: ${clip(text)}`;
  const room = max - suffix.length;
  return `${message.length > room ? `${message.slice(0, Math.max(0, room - 1))}…` : message}${suffix}`;
}

function clip(s: string): string {
  const flat = s.replace(/\s*\n\s*/g, '; ');
  return flat.length > MAX_CAUSE_MESSAGE ? `${flat.slice(0, MAX_CAUSE_MESSAGE - 1)}…` : flat;
}
