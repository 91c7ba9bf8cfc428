/** The OCI artifact source (spec.source.oci): registry client, verified download, safe unpacking, push. */
export { sourceBySpec } from './dispatch.ts';
export { createOciSource } from './source-port.ts';
export type { OciSourceConfig } from './source-port.ts';
export { RegistryClient } from './registry-client.ts';
export { pushArtifact } from './push.ts';
