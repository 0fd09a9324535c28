// Tests and scripts run the TypeScript sources through tsx: `node --import ./test/tsx.js …`
// (production runs dist/, compiled by tsc, and needs no loader). Not `--import tsx`: on Node 20,
// tsx 4 registers its hooks on the main thread only (in worker threads from Node 22.22.3), so a
// thread whose entry is a .ts file (the ledger's) fails with 'Unknown file extension ".ts"'. Worker
// threads inherit the parent's execArgv, so this file runs again in each of them and registers there.
import { register } from 'tsx/esm/api';

register();
