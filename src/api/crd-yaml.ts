import { stringify } from 'yaml';
import { packageSyncCRD } from './crd.ts';
import { notifierCRD } from './notifier-crd.ts';
import { packageSyncSetCRD } from './packagesyncset-crd.ts';

export const CRD_FILE = 'crds/packagesync.io_packagesyncs.yaml';
export const NOTIFIER_CRD_FILE = 'crds/packagesync.io_notifiers.yaml';
export const SET_CRD_FILE = 'crds/packagesync.io_packagesyncsets.yaml';

export function crdYaml(): string {
  return `# Generated from src/api/packagesync.ts by \`make crds\`. Do not edit.\n---\n${stringify(packageSyncCRD(), { lineWidth: 0 })}`;
}

export function notifierCrdYaml(): string {
  return `# Generated from src/api/notifier.ts by \`make crds\`. Do not edit.\n---\n${stringify(notifierCRD(), { lineWidth: 0 })}`;
}

export function setCrdYaml(): string {
  return `# Generated from src/api/packagesyncset.ts by \`make crds\`. Do not edit.\n---\n${stringify(packageSyncSetCRD(), { lineWidth: 0 })}`;
}
