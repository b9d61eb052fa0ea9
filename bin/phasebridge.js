#!/usr/bin/env node
// The published entry point: load TypeScript sources through tsx, then run the CLI.
import { register } from 'tsx/esm/api';

register();
await import('../src/cli/main.ts');
