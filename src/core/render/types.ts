import type { KubeObject, ObjectRef } from '../object.ts';
import type { Owner } from '../plan/ownership.ts';

/** One manifest file as the source adapter read it: .yaml, .yml or .json, size already checked. */
export interface SourceFile {
  /** POSIX path relative to the package root: what messages name. */
  path: string;
  content: string;
}

export interface RenderOptions {
  /** The PackageSync rendering: stamped on every object as owner labels. */
  owner: Owner;
  /** Namespace for namespaced objects that name none. Default: the owner's namespace. */
  defaultNamespace?: string;
  /** spec.targetNamespace: the namespace of namespaced objects that name none. */
  targetNamespace?: string;
  /** Discovery's answer for a kind, or undefined when the cluster does not know it (yet). */
  isNamespaced?: (group: string, kind: string) => boolean | undefined;
  /** spec.allowEmpty: an empty package is a valid state (it prunes everything). */
  allowEmpty?: boolean;
  /** spec.postBuild, its variables resolved: substituted into every object before it is checked. */
  substitution?: Substitution;
}

/** postBuild substitution, its variables resolved (see ./substitute.ts). */
export interface Substitution {
  /** Every variable, already merged (see mergeVariables). */
  variables: Readonly<Record<string, string>>;
  /** A `${var}` with no value and no default fails the render (Flux's StrictPostBuildSubstitutions). */
  strict: boolean;
  /**
   * spec.postBuild.substituteStrategy Always: substitute even when no variable is defined (for
   * `${var:=default}`). By default (WithVariables) a package with no variables is left untouched, as Flux does.
   */
  always?: boolean;
}

export interface RenderedPackage {
  /** Files in path order, documents in file order. */
  objects: KubeObject[];
  /** sha256 hex of the canonical JSON of all objects, independent of file layout and key order. */
  digest: string;
  /**
   * refKey → where the object is defined, for messages about it: `path:line` for a plain file (the line its
   * document or List item starts on), the file alone for a built package (kustomize and helm say no line).
   */
  sources: Map<string, string>;
  /**
   * Fields a render tool wrote twice in an object (kustomize, helm); the last value is the one applied, as
   * `helm install` and Flux apply it (docs/adr/0034). Said once as a Warning event and in the plan.
   */
  duplicateKeys?: DuplicateKeyNote[];
}

/** One field a render tool's output repeated: which object (as applied), which field, which file made it. */
export interface DuplicateKeyNote {
  ref: ObjectRef;
  field: string;
  source: string;
}

/**
 * Where an object came from: file, 1-based document index, and 1-based item index inside a List.
 * Document 0: built by a tool (kustomize, helm), which says the file but not the document.
 */
export interface SourceLocation {
  path: string;
  document: number;
  items: number[];
  /** 1-based line the object starts on (its document's first node, or its List item), when known. */
  line?: number;
}

/**
 * `apps/web/deploy.yaml:12`, as compilers and editors name a place; without a line (a built package),
 * the file and, when known, which document and item: `a.yaml (document 2, item 1)`.
 */
export function describeLocation(where: SourceLocation): string {
  if (where.line !== undefined) return `${where.path}:${where.line}`;
  const parts = [...(where.document > 0 ? [`document ${where.document}`] : []), ...where.items.map((i) => `item ${i}`)];
  return parts.length === 0 ? where.path : `${where.path} (${parts.join(', ')})`;
}
