/**
 * Files of the checkout (or of the image's /app) named from its root: package.json, hack/, dist/ui, bin/.
 *
 * Every such path goes through here, and this file sits two directories below the root, as the controller's
 * bundle does (dist/controller/main.js, hack/build-controller.ts; docs/adr/0052): an `import.meta.url` elsewhere
 * would name a different directory once bundled, since the bundle has one URL for all its modules.
 */
import { fileURLToPath } from 'node:url';

const ROOT = new URL('../../', import.meta.url);

/** A file or directory under the root, as a file: URL (a directory ends with '/'). */
export const repoUrl = (path: string): URL => new URL(path, ROOT);

/** The same as a filesystem path. */
export const repoPath = (path: string): string => fileURLToPath(repoUrl(path));
