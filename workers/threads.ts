import { Worker, type WorkerOptions } from 'node:worker_threads';

// Worker threads run the TypeScript sources through tsx, as the main thread does. Under the test
// runner (or `node --import tsx`) the loader is already in execArgv; under bin/family-events.js it
// was registered programmatically, so it is added for Piscina's threads (whose entry is a .js file
// that imports ours later, once the loader is in place).
export function workerExecArgv(): string[] {
  const hasLoader = process.execArgv.some((a) => a.includes('tsx'));
  return hasLoader ? [...process.execArgv] : [...process.execArgv, '--import', import.meta.resolve('tsx')];
}

/**
 * A worker_threads Worker running a TypeScript module. A .ts entry cannot be given to Worker
 * directly: the loader from `--import` registers asynchronously and loses the race with the entry
 * (Node 20: "Unknown file extension .ts"). So a one-line bootstrap registers tsx, then imports it.
 */
export function tsWorker(module: URL, options: Omit<WorkerOptions, 'eval' | 'execArgv'>): Worker {
  const tsx = import.meta.resolve('tsx/esm/api');
  const boot = `import(${JSON.stringify(tsx)}).then((t) => { t.register(); return import(${JSON.stringify(module.href)}); });`;
  // The parent's other flags (--cpu-prof, --inspect…) carry over; its loader flags are redone above.
  const execArgv: string[] = [];
  for (let i = 0; i < process.execArgv.length; i++) {
    const a = process.execArgv[i] ?? '';
    if (a === '--import' || a === '--loader' || a === '--require') i++;
    else if (!a.startsWith('--import=') && !a.startsWith('--loader=') && !a.startsWith('--require=')) execArgv.push(a);
  }
  return new Worker(boot, { ...options, eval: true, execArgv });
}
