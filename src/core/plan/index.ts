export { kindRank, kindsFirst, kindsLast, otherKindsRank } from './kind-order.ts';
export { planWaves } from './waves.ts';
export { planPrune } from './prune.ts';
export { mayPrune, ownerLabels, ownershipOf, OwnerLabel, PruneAnnotation, PruneDisabled } from './ownership.ts';
export type { Owner, Ownership } from './ownership.ts';
export { DigestAnnotation, desiredDigest, needsApply, withDigest } from './drift.ts';
export { isSubset } from './subset.ts';
export { countChanges, hasChanges, summarizeChanges } from './changeset.ts';
export type { Change, ChangeAction } from './changeset.ts';
