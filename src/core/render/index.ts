export { plainPackage, readObjects, renderObjects, renderPackage } from './render.ts';
export { canonicalJson, compareUtf8, objectDigest, sha256Hex } from './canonical.ts';
export { LocalConfigAnnotation } from './manifests.ts';
export { maxAliasCount } from './parse.ts';
export type { RenderedPackage, RenderOptions, SourceFile } from './types.ts';
export type { LocatedObject } from './manifests.ts';
export { mergeVariables, SubstituteAnnotations, substitutionDisabled } from './substitute.ts';
export type { Substitution, VariableSource } from './substitute.ts';
