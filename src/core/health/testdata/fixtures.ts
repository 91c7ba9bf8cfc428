/// <reference types="vite/types/importMeta.d.ts" />
import { parseAllDocuments } from 'yaml';
import type { KubeObject } from '../../object.ts';

/**
 * Golden objects for the tests, read through Vite's import.meta.glob so src/core stays free of fs even in
 * tests. Only vitest can load this file.
 */
const files: Record<string, string> = import.meta.glob('./*.yaml', { query: '?raw', import: 'default', eager: true });

/** Every document of testdata/<name>, in file order. */
export function fixtureDocs(name: string): KubeObject[] {
  const text = files[`./${name}`];
  if (text === undefined) throw new Error(`no fixture testdata/${name}`);
  return parseAllDocuments(text).map((doc) => {
    if (doc.errors.length) throw new Error(`testdata/${name}: ${doc.errors[0]?.message}`);
    return doc.toJS() as KubeObject;
  });
}

/** The single object in testdata/<name>. */
export function fixture(name: string): KubeObject {
  const docs = fixtureDocs(name);
  if (docs.length !== 1) throw new Error(`testdata/${name} holds ${docs.length} documents, expected 1`);
  return docs[0] as KubeObject;
}

export function fixtureNames(): string[] {
  return Object.keys(files).map((path) => path.slice(2));
}
