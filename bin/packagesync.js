#!/usr/bin/env node
// The `packagesync` command. Node >= 24 runs the TypeScript sources directly (docs/adr/0002).
import { main } from '../src/main.ts';

main();
