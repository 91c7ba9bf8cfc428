#!/usr/bin/env node
// The `packagesync` command. Node >= 24 runs the TypeScript sources directly (docs/adr/0002).
// Installed as `kubectl-packagesync` too (package.json bin), kubectl runs it as `kubectl packagesync …`.
import { basename } from 'node:path';
import { main, program } from '../src/main.ts';

if (basename(process.argv[1] ?? '') === 'kubectl-packagesync') program.name('kubectl packagesync');
main();
