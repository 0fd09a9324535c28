// Where a worker thread starts. A thread is started from a file, and that file must be the kind the
// caller itself was loaded as: .js under dist/ (production, compiled by tsc), .ts when the sources
// run under tsx (tests, benches). The caller's own URL says which.
import path from 'node:path';

/** The thread entry `relative` (no extension) to `callerUrl` (the caller's import.meta.url), with the caller's extension. */
export function threadEntry(relative: string, callerUrl: string): URL {
  return new URL(relative + path.extname(callerUrl), callerUrl);
}
