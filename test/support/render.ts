/**
 * Shared by the render unit tests (src/core/render/*.test.ts): render plain files as a PackageSync `web` in
 * `team-a` would, and name what came out.
 */
import type { KubeObject } from '../../src/core/object.ts';
import { renderPackage } from '../../src/core/render/render.ts';
import type { RenderedPackage, RenderOptions, SourceFile } from '../../src/core/render/types.ts';

export const owner = { name: 'web', namespace: 'team-a' };
export const ownerMarks = { 'packagesync.io/name': 'web', 'packagesync.io/namespace': 'team-a' };

export function render(files: SourceFile[] | Record<string, string>, options: Partial<RenderOptions> = {}) {
  const list = Array.isArray(files) ? files : Object.entries(files).map(([path, content]) => ({ path, content }));
  return renderPackage(list, { owner, ...options });
}

export function rendered(
  files: SourceFile[] | Record<string, string>,
  options: Partial<RenderOptions> = {},
): RenderedPackage {
  const result = render(files, options);
  if (!result.ok) throw new Error(`render failed: ${result.failure.message}`);
  return result.value;
}

/** `Kind/namespace/name` of each rendered object, namespace '-' when there is none. */
export const ids = (pkg: RenderedPackage) =>
  pkg.objects.map((o: KubeObject) => `${o.kind}/${o.metadata.namespace ?? '-'}/${o.metadata.name}`);

/** A ConfigMap manifest, as text. */
export const cm = (name: string, namespace?: string) =>
  `apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ${name}\n${namespace ? `  namespace: ${namespace}\n` : ''}data:\n  k: v\n`;
