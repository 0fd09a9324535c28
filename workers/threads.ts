// Worker threads run the TypeScript sources through tsx, as the main thread does. Under the test
// runner (or `node --import tsx`) the loader is already in execArgv; under bin/family-events.js it
// was registered programmatically, so it is added for the threads.
export function workerExecArgv(): string[] {
  const hasLoader = process.execArgv.some((a) => a.includes('tsx'));
  return hasLoader ? [...process.execArgv] : [...process.execArgv, '--import', import.meta.resolve('tsx')];
}
