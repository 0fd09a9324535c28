// What the search and PostGIS benchmarks share: the pinned clock, the machine description written
// beside every figure, child processes, free ports, and where results go.
import { execFileSync, spawn, type SpawnOptions } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { DateTime } from 'luxon';
import { REPO_ROOT } from '../../core/config.ts';

export { REPO_ROOT };

/** The instant every benchmark pins, so "upcoming" selects the same events in both systems. */
export const NOW_ISO = '2026-11-21T09:00:00-08:00';
export const NOW_MS = Date.parse(NOW_ISO);

export const RESULTS_DIR = path.join(REPO_ROOT, 'bench', 'results');
/** Scratch space inside the repo (gitignored), not os.tmpdir(): a 1M-event CSV does not belong in a tmpfs. */
export const SCRATCH_DIR = path.join(REPO_ROOT, '.tmp');

export const stamp = (): string => DateTime.now().toFormat("yyyyLLdd'T'HHmmss");

const started = performance.now();
/** Progress on stderr, with seconds since start so slow setup steps show. */
export function log(msg: string): void {
  process.stderr.write(`[bench ${((performance.now() - started) / 1000).toFixed(1).padStart(6)} s] ${msg}\n`);
}

/** A failure the user can act on: printed as one message, without a stack trace. */
export class BenchError extends Error {}

/** Call first thing: a benchmark's errors (top-level await included) end it with a message and exit 1. */
export function exitOnError(): void {
  process.on('uncaughtException', (err) => {
    // node:util parseArgs' errors (unknown option, missing value) are the user's to fix, like ours.
    const usage = err instanceof BenchError || String((err as { code?: unknown }).code).startsWith('ERR_PARSE_ARGS');
    process.stderr.write(usage ? `bench: ${err.message}\n` : `bench: ${err.stack ?? String(err)}\n`);
    process.exit(1);
  });
}

function packageVersion(name: string): string {
  try {
    return (JSON.parse(readFileSync(path.join(REPO_ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return 'unknown';
  }
}

function commandLine(file: string, args: string[]): string {
  try {
    return execFileSync(file, args, { cwd: REPO_ROOT, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }).trim();
  } catch (err) {
    // `wrk -v` prints its banner and exits 1, so a failed exit may still carry the answer.
    const out = (err as { stdout?: string }).stdout;
    return typeof out === 'string' && out.trim() ? out.trim() : 'unknown';
  }
}

export interface MachineInfo {
  readonly cpu: string;
  readonly cores: number;
  readonly mem_gib: number;
  readonly platform: string;
  readonly node: string;
  readonly uws: string;
  readonly duckdb: string;
  readonly git_commit: string;
  /** Uncommitted changes in the tree when measured: figures of a dirty tree are not those of the commit. */
  readonly git_dirty: boolean;
  /** 1-minute load average just before measuring: other work on a 2-core machine is the main noise source. */
  readonly loadavg_1m: number;
}

export function machineInfo(): MachineInfo {
  const status = commandLine('git', ['status', '--porcelain', '--untracked-files=no']);
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.cpus().length,
    mem_gib: +(os.totalmem() / 2 ** 30).toFixed(1),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    uws: packageVersion('@trufflesuite/uws-js-unofficial'),
    duckdb: packageVersion('@duckdb/node-api'),
    git_commit: commandLine('git', ['rev-parse', 'HEAD']),
    git_dirty: status !== '' && status !== 'unknown',
    loadavg_1m: +(os.loadavg()[0] ?? 0).toFixed(2),
  };
}

export function describeMachine(m: MachineInfo): string {
  return `${m.cores}× ${m.cpu}, ${m.mem_gib} GiB, ${m.platform}; Node ${m.node}, uWS ${m.uws}, DuckDB ${m.duckdb}; commit ${m.git_commit.slice(0, 12)}${m.git_dirty ? ' (dirty)' : ''}; load ${m.loadavg_1m}`;
}

/** A loopback port the OS says is free now (a tiny race with other processes is acceptable for a benchmark). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      srv.close(() => (typeof addr === 'object' && addr ? resolve(addr.port) : reject(new Error('no port'))));
    });
  });
}

export interface RunResult {
  readonly code: number | null;
  /** Empty when the output was only counted (countStdout). */
  readonly stdout: string;
  readonly stdoutBytes: number;
  readonly stderr: string;
}

export type RunOptions = SpawnOptions & {
  input?: NodeJS.ReadableStream;
  /** Count standard output's bytes and drop them (a bulk export need not fit in a string). */
  countStdout?: boolean;
};

/** Runs a command to completion, collecting its output; never throws for a non-zero exit (callers decide). */
export function run(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const { input, countStdout, ...spawnOpts } = opts;
  return new Promise((resolve, reject) => {
    const child = spawn(file, args, { cwd: REPO_ROOT, ...spawnOpts, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stdoutBytes = 0;
    let stderr = '';
    if (countStdout) child.stdout?.on('data', (b: Buffer) => (stdoutBytes += b.length));
    else child.stdout?.setEncoding('utf8').on('data', (s: string) => ((stdout += s), (stdoutBytes += Buffer.byteLength(s))));
    child.stderr?.setEncoding('utf8').on('data', (s: string) => (stderr += s));
    if (input && child.stdin) input.pipe(child.stdin);
    child.once('error', (err) => reject(new BenchError(`cannot run ${file}: ${err.message}`)));
    child.once('close', (code) => resolve({ code, stdout, stdoutBytes, stderr }));
  });
}

/** Like run(), but a non-zero exit is an error that quotes the end of the command's output. */
export async function runOk(file: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
  const r = await run(file, args, opts);
  if (r.code !== 0) {
    const tail = `${r.stderr}\n${r.stdout}`.trim().split('\n').slice(-12).join('\n');
    throw new BenchError(`${file} ${args.join(' ')} exited ${r.code}:\n${tail}`);
  }
  return r;
}

export async function writeResult(prefix: string, data: unknown): Promise<string> {
  const out = path.join(RESULTS_DIR, `${prefix}-${stamp()}.json`);
  await writeFile(out, `${JSON.stringify(data, null, 2)}\n`);
  return out;
}

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Percentile by nearest rank over sorted values. */
export function percentile(sorted: readonly number[], p: number): number | null {
  if (!sorted.length) return null;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? null;
}

export const fmt = (n: number | null | undefined, digits = 2): string => (n === null || n === undefined || !Number.isFinite(n) ? '-' : n.toFixed(digits));

/** Left-aligned first column, right-aligned figures. */
export function table(head: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (r: readonly string[]): string => r.map((c, i) => (i === 0 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  ');
  return [line(head), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

/** A command-line option that must be a whole number of at least `min`. */
export function wholeArg(name: string, value: string | undefined, min: number): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min) throw new BenchError(`--${name} must be a whole number >= ${min} (got ${value})`);
  return n;
}
