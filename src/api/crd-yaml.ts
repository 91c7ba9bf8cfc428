import { stringify } from 'yaml';
import { packageSyncCRD } from './crd.ts';

export const CRD_FILE = 'crds/packagesync.io_packagesyncs.yaml';

export function crdYaml(): string {
  return `# Generated from src/api/packagesync.ts by \`make crds\`. Do not edit.\n---\n${stringify(packageSyncCRD(), { lineWidth: 0 })}`;
}
