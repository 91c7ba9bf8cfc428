/**
 * Every reason a PackageSync condition can carry. Steps return Failures with one of these; the status
 * reducer (src/core/status.ts) is the only place that turns them into conditions.
 */
export const Reason = {
  // success and progress
  ReconciliationSucceeded: 'ReconciliationSucceeded',
  Progressing: 'Progressing',
  HealthCheckPending: 'HealthCheckPending',
  Suspended: 'Suspended',
  DependencyNotReady: 'DependencyNotReady',
  DependencyCycle: 'DependencyCycle',
  /** A newer revision, or shutdown, ended the run early: never written to status (the next run writes its own). */
  Superseded: 'Superseded',
  // source
  InvalidSpec: 'InvalidSpec',
  InvalidURL: 'InvalidURL',
  InvalidRef: 'InvalidRef',
  InvalidPath: 'InvalidPath',
  RefNotFound: 'RefNotFound',
  PathNotFound: 'PathNotFound',
  PathEscape: 'PathEscape',
  ArtifactTooLarge: 'ArtifactTooLarge',
  SourceTimeout: 'SourceTimeout',
  FetchFailed: 'FetchFailed',
  AuthSecretNotFound: 'AuthSecretNotFound',
  InvalidAuthSecret: 'InvalidAuthSecret',
  AuthenticationFailed: 'AuthenticationFailed',
  /** spec.source.verify: the commit (or tag) is unsigned, or signed by a key the Secret does not allow. */
  VerificationFailed: 'VerificationFailed',
  // OCI artifact sources (spec.source.oci)
  /** The manifest or the selected layer is not a format read here (an index, a non-tarball layer). */
  ArtifactMediaTypeUnsupported: 'ArtifactMediaTypeUnsupported',
  /** The artifact's tarball has an entry that would land outside its directory: `..`, absolute, links out. */
  ArtifactUnsafeEntry: 'ArtifactUnsafeEntry',
  /** ref.tag with ref.digest: the tag now names another manifest. */
  ArtifactTagMoved: 'ArtifactTagMoved',
  /** What the registry sent does not hash to the digest it was asked for. */
  ArtifactDigestMismatch: 'ArtifactDigestMismatch',
  // render
  /** A file or a render tool (kustomize build, helm template) failed; terminal unless the tool could not run. */
  RenderFailed: 'RenderFailed',
  /** A kustomize or Helm package asks for what is never done: outside the checkout, remote bases, plugins. */
  RenderRefused: 'RenderRefused',
  InvalidManifest: 'InvalidManifest',
  EmptyRender: 'EmptyRender',
  DuplicateObject: 'DuplicateObject',
  /** A Warning event: kustomize or Helm output repeats a key; the last value is applied (docs/adr/0034). */
  DuplicateKeys: 'DuplicateKeys',
  /** spec.decryption: a SOPS-encrypted object could not be decrypted (no key, wrong key, tampered). */
  DecryptionFailed: 'DecryptionFailed',
  // postBuild substitution
  SubstitutionFailed: 'SubstitutionFailed',
  SubstitutionSourceNotFound: 'SubstitutionSourceNotFound',
  // apply and prune
  ApplyFailed: 'ApplyFailed',
  ApplyConflict: 'ApplyConflict',
  OwnershipConflict: 'OwnershipConflict',
  ImmutableFieldChange: 'ImmutableFieldChange',
  Forbidden: 'Forbidden',
  NamespaceNotAllowed: 'NamespaceNotAllowed',
  UnknownKind: 'UnknownKind',
  PruneFailed: 'PruneFailed',
  PruneBudgetExceeded: 'PruneBudgetExceeded',
  /** status.inventory names a shard ConfigMap that is missing or altered (docs/adr/0027): nothing applied or pruned. */
  InventoryUnreadable: 'InventoryUnreadable',
  // dependency graph
  InvalidDependency: 'InvalidDependency',
  DependencyFailed: 'DependencyFailed',
  // drift (docs/drift.md): Drifted=True in Detect mode; an event when Correct mode took fields back
  DriftDetected: 'DriftDetected',
  DriftCorrected: 'DriftCorrected',
  // health
  HealthCheckFailed: 'HealthCheckFailed',
  // remote clusters (spec.kubeConfig)
  /** The kubeConfig Secret is missing, lacks the key, or holds a kubeconfig that is not valid or is refused. */
  KubeConfigInvalid: 'KubeConfigInvalid',
  /** The cluster spec.kubeConfig names did not answer. */
  RemoteClusterUnreachable: 'RemoteClusterUnreachable',
  // anything else
  InternalError: 'InternalError',
} as const;

export type Reason = (typeof Reason)[keyof typeof Reason];
