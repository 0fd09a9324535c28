// Account enumeration through the "send me a sign-in link" form (POST /account/sign-in): whoever
// types an address must not learn whether it has an account, nor whether its mail limit (3 links
// in 10 minutes) has been reached. Not from the answer — status, Location, every header but Date,
// the body's bytes — and not from how long the answer takes.
//
// The answers are compared byte for byte. The timings are compared statistically, over real HTTP
// against the real server (startTestServer, in a process of its own, on loopback): two groups of
// requests, interleaved pair by pair in random order (a slow spell of the machine falls on both
// groups alike), each request from a fresh browser — GET the form, then the POST, whose round trip
// alone is timed — with a client address of its own behind a trusted proxy (TRUST_PROXY=true,
// X-Forwarded-For), so that the per-client limit of 10 a minute never answers.
//
// The oracle (`compareTimings`) tells the groups apart, and the test fails, when either
//   1. a Mann–Whitney U test finds one group's times ranking above the other's even after
//      0.5 ms is taken off each of them (one-sided p below 0.0005, each way round); or
//   2. the difference of the medians, or of the 10th percentiles, exceeds max(0.5 ms, noise).
//      `noise` comes from the samples themselves: how far that statistic moves between two random
//      halves of one group, scaled to the full groups, 3.29 standard deviations (the two-sided
//      0.1 % point). The 10th percentile is the fast end, a path's own cost with the least
//      interference: on loopback it is steady to a few tenths of a millisecond even when the
//      median wanders by a millisecond.
// An extra 2 ms on one path (a database write awaited, a mail sent before answering) fails it: the
// oracle's own tests below show it on synthetic samples, and that samples of one distribution pass,
// outliers and slow spells included; a 2 ms delay put into the server's known-address path failed
// every run on a 2-core machine, with a load average up to 9 (the 10th percentile caught it when
// the load hid it from the other two). When the noise grows to several milliseconds, the tolerance
// grows with it and the test passes rather than flakes; a 2 ms difference can then go unseen in
// that run. The rank test is shifted by the same 0.5 ms floor as the quantiles: unshifted, it
// resolves any steady difference given enough pairs, and in CI it failed a run on 0.04 ms (medians
// 0.950 and 0.904 ms, p = 0.00024) — the server answers both groups by one code path before the
// answer leaves, and what differed was the residue of the previous request's mail. Nothing asserts a speed. The file is named *.timing.test.ts so that `npm test` runs it
// alone, after the files that run two at a time: in CI, beside a test of three nodes behind nginx,
// the median of one group moved 0.7 ms for reasons neither group's path had.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, describe, test, type TestContext } from 'node:test';
import { errorFunction, wilcoxonRankSum } from 'simple-statistics';
import { rng } from '../../../snapshot/sample/synthetic.ts';
import { FormBrowser, hiddenFields, type Answer } from './form-browser.ts';
import { Outbox, type Mail } from './outbox.ts';

// ---------------------------------------------------------------- the timing oracle

/** Below this, a difference on loopback is not one this test claims to resolve. */
const FLOOR_MS = 0.5;
/** Every check runs at this level: a false alarm once in a thousand runs of identical paths, or less. */
const ALPHA = 0.001;
/** The two-sided ALPHA point of a standard normal. */
const Z_TWO_SIDED = 3.29;
/** The statistics compared besides the ranks: the fast end and the middle. */
const QUANTILES = [
  { q: 0.1, name: '10th percentile' },
  { q: 0.5, name: 'median' },
] as const;
/** Random splits of a group in halves, per statistic: enough for its standard deviation to settle. */
const SPLITS = 1000;

/**
 * Mann–Whitney U, two-sided, normal approximation with the tie and continuity corrections (fine for
 * n ≥ 20 a group). The rank sum (average ranks for ties) and the error function are
 * simple-statistics'; the approximation around them is the textbook one.
 */
function mannWhitney(a: readonly number[], b: readonly number[]): { u: number; z: number; p: number } {
  const n1 = a.length;
  const n2 = b.length;
  const n = n1 + n2;
  const u = wilcoxonRankSum([...a], [...b]) - (n1 * (n1 + 1)) / 2;
  // Σ(t³ − t) over each run of t equal values: ties shrink the rank sum's variance.
  const pooled = [...a, ...b].sort((x, y) => x - y);
  let ties = 0;
  for (let i = 0; i < n;) {
    let j = i;
    while (j + 1 < n && pooled[j + 1] === pooled[i]) j++;
    ties += (j - i + 1) ** 3 - (j - i + 1);
    i = j + 1;
  }
  const sd = Math.sqrt(((n1 * n2) / 12) * (n + 1 - ties / (n * (n - 1))));
  const z = sd === 0 ? 0 : Math.max(0, Math.abs(u - (n1 * n2) / 2) - 0.5) / sd;
  return { u, z, p: Math.min(1, 1 - errorFunction(z / Math.SQRT2)) };
}

/**
 * One-sided p that `slow`'s times, each less FLOOR_MS, still rank above `fast`'s: the rank test of
 * "slower by more than the floor". U counts the pairs where the first sample is the larger.
 */
function slowerBeyondFloor(slow: readonly number[], fast: readonly number[]): number {
  const { u, p } = mannWhitney(
    slow.map((x) => x - FLOOR_MS),
    fast,
  );
  return u > (slow.length * fast.length) / 2 ? p / 2 : 1 - p / 2;
}

/** The q-quantile of numbers sorted in place (linear interpolation). */
function sortedQuantile(s: Float64Array, q: number): number {
  const at = (s.length - 1) * q;
  const lo = Math.floor(at);
  return (s[lo] ?? NaN) + ((s[Math.ceil(at)] ?? NaN) - (s[lo] ?? NaN)) * (at - lo);
}

/**
 * The variance of "q-quantile of one half − q-quantile of the other" over random splits of `xs` in
 * halves. A quantile's variance goes as 1/n, so a half's is twice the whole group's, and the
 * variance of that difference is four times the variance of the group's own q-quantile.
 */
function splitHalfVariance(xs: readonly number[], q: number, random: () => number): number {
  const order = xs.map((_, i) => i);
  const h = xs.length >> 1;
  const x = new Float64Array(h);
  const y = new Float64Array(xs.length - h);
  let squares = 0;
  for (let r = 0; r < SPLITS; r++) {
    for (let i = order.length - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      [order[i], order[j]] = [order[j] ?? 0, order[i] ?? 0];
    }
    for (let i = 0; i < xs.length; i++) (i < h ? x : y)[i < h ? i : i - h] = xs[order[i] ?? 0] ?? NaN;
    squares += (sortedQuantile(x.sort(), q) - sortedQuantile(y.sort(), q)) ** 2;
  }
  return squares / SPLITS;
}

interface Statistic {
  readonly name: string;
  readonly a: number;
  readonly b: number;
  /** a − b, ms. */
  readonly diff: number;
  /** Z_TWO_SIDED standard deviations of that difference when nothing tells the groups apart, ms. */
  readonly noise: number;
  /** max(FLOOR_MS, noise). */
  readonly tolerance: number;
}

interface Comparison {
  readonly statistics: readonly Statistic[];
  /** Mann–Whitney's one-sided p that a's times rank above b's each less FLOOR_MS. */
  readonly pA: number;
  /** The same, b above a. */
  readonly pB: number;
  /** Why the groups are told apart; empty when they are not. */
  readonly reasons: readonly string[];
}

/** Compares two groups of round trips (ms). Distinguishable when `reasons` is not empty. */
function compareTimings(a: readonly number[], b: readonly number[], seed = 1): Comparison {
  const random = rng(seed);
  const sa = Float64Array.from(a).sort();
  const sb = Float64Array.from(b).sort();
  const statistics = QUANTILES.map(({ q, name }): Statistic => {
    const va = sortedQuantile(sa, q);
    const vb = sortedQuantile(sb, q);
    // Var(q_a − q_b) = Var(q_a) + Var(q_b) = (split-half variance of a + that of b) / 4.
    const noise = Z_TWO_SIDED * Math.sqrt((splitHalfVariance(a, q, random) + splitHalfVariance(b, q, random)) / 4);
    return { name, a: va, b: vb, diff: va - vb, noise, tolerance: Math.max(FLOOR_MS, noise) };
  });
  const pA = slowerBeyondFloor(a, b);
  const pB = slowerBeyondFloor(b, a);
  const reasons: string[] = [];
  if (pA < ALPHA / 2) reasons.push(`Mann–Whitney: a slower by more than ${FLOOR_MS} ms, one-sided p = ${pA.toExponential(2)} < ${ALPHA / 2}`);
  if (pB < ALPHA / 2) reasons.push(`Mann–Whitney: b slower by more than ${FLOOR_MS} ms, one-sided p = ${pB.toExponential(2)} < ${ALPHA / 2}`);
  for (const st of statistics) {
    if (Math.abs(st.diff) > st.tolerance)
      reasons.push(`|${st.name} difference| ${Math.abs(st.diff).toFixed(3)} ms > max(${FLOOR_MS} ms, noise ${st.noise.toFixed(3)} ms)`);
  }
  return { statistics, pA, pB, reasons };
}

const describeComparison = (c: Comparison, a: string, b: string): string =>
  [
    ...c.statistics.map(
      (st) => `${st.name}: ${a} ${st.a.toFixed(3)} ms, ${b} ${st.b.toFixed(3)} ms (difference ${st.diff.toFixed(3)}, tolerance ${st.tolerance.toFixed(3)})`,
    ),
    `Mann–Whitney, ${a} slower by more than ${FLOOR_MS} ms: p = ${c.pA.toPrecision(3)}; ${b} slower by more than ${FLOOR_MS} ms: p = ${c.pB.toPrecision(3)}`,
  ].join('; ');

// ---------------------------------------------------------------- synthetic samples for the oracle's own test

/** Standard normal by Box–Muller. */
const normal = (random: () => number): number => Math.sqrt(-2 * Math.log(1 - random())) * Math.cos(2 * Math.PI * random());

const exponential = (random: () => number, mean: number): number => -mean * Math.log(1 - random());

/**
 * n pairs of POST round trips (ms), shaped like this file's measurements but noisier. Quiet: a bulk
 * at 3 ms, 40 % of requests slowed by other work (exponential, mean 5 ms), 3 % outliers of 10–40 ms
 * (a GC, the scheduler); median 3.3 ms, interquartile range 3 ms, where this file alone on 2 cores
 * measures about 2–3 ms and 1 ms. Busy: 85 % slowed (mean 9 ms), 5 % outliers of 20–100 ms and slow
 * spells of up to 6 ms lasting a few pairs; median 12 ms, interquartile range 12 ms, more than the
 * server in this test's own process measured with another server test file on the same 2 cores.
 * `shiftB` is added to every b.
 */
function syntheticPairs(seed: number, n: number, shiftB: number, busy: boolean): { a: number[]; b: number[] } {
  const random = rng(seed);
  const one = (): number =>
    3 * Math.exp(0.1 * normal(random)) +
    (random() < (busy ? 0.85 : 0.4) ? exponential(random, busy ? 9 : 5) : 0) +
    (random() < (busy ? 0.05 : 0.03) ? (busy ? 20 + 80 * random() : 10 + 30 * random()) : 0);
  const a: number[] = [];
  const b: number[] = [];
  let spell = 0;
  for (let i = 0; i < n; i++) {
    if (busy) spell = Math.min(6, Math.max(0, spell + normal(random)));
    a.push(one() + spell);
    b.push(one() + spell + shiftB);
  }
  return { a, b };
}

// ---------------------------------------------------------------- a browser (a local copy of account.test.ts's, reduced)

/**
 * What an observer can compare of two answers: status, every header but Date (a Set-Cookie by its
 * name, value length and attributes), and the body's bytes.
 */
function observable(a: Answer): unknown {
  const headers = [...a.headers].filter(([k]) => k !== 'date' && k !== 'set-cookie');
  const cookies = a.headers
    .getSetCookie()
    .map((line) => line.replace(/^([^=]*)=([^;]*)/, (_, name: string, value: string) => `${name}=<${value.length} chars>`));
  return { status: a.status, headers, cookies, body: a.body.toString('base64') };
}

// ---------------------------------------------------------------- the server, its outbox, and the requests

let tmp: string;
let dataDir: string;
let outbox: Outbox;
let srv: {
  readonly base: string;
  /** The website's origin (WEB_BASE_URL): what its forms' POSTs send as Origin, and what its links point to. */
  readonly web: string;
  stop(): Promise<void>;
};

/**
 * startTestServer (../helpers.ts) in a process of its own, behind a trusted proxy. Not in this one:
 * a server in the test's process shares its event loop with the client, and whatever the server does
 * right after answering (writing a mail to the outbox) would be counted in the time of the answer
 * that caused it. An observer across a network never sees that work in the answer's time; it sees
 * the answer's own. (This process does not even load the helpers: the child says where it listens.)
 */
async function startServerProcess(dir: string): Promise<typeof srv> {
  // A script file, not --eval: the server's worker threads inherit the process's execArgv.
  const script = path.join(dir, 'server.mjs');
  const helpers = pathToFileURL(path.join(import.meta.dirname, '..', 'helpers.ts')).href;
  await writeFile(
    script,
    `const { startTestServer } = await import(${JSON.stringify(helpers)});
// No search runs here: one pool thread is enough.
const srv = await startTestServer(process.argv[2], { TRUST_PROXY: 'true', POOL_THREADS: '1' });
process.stdin.on('end', () => srv.stop().then(() => process.exit(0)));
process.stdin.resume();
process.stdout.write(JSON.stringify({ base: srv.base, web: srv.config.webBaseUrl }) + '\\n');
`,
  );
  const child = spawn(process.execPath, ['--import', path.join(import.meta.dirname, '..', '..', 'tsx.js'), script, path.join(dir, 'data')], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  const exited = once(child, 'exit');
  let out = '';
  const where = await new Promise<{ base: string; web: string }>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString('utf8');
      if (out.includes('\n')) resolve(JSON.parse(out) as { base: string; web: string });
    });
    void exited.then(([code]) => reject(new Error(`the server process exited (${String(code)}) before listening`)));
  });
  return {
    ...where,
    stop: async () => {
      child.stdin.end();
      await exited;
    },
  };
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until the outbox holds `count` files (5 s at most; mailsByRecipient checks the count and the
 * contents afterwards), then a few milliseconds more for what the server does after the write (its
 * log line), the same few for every request.
 */
async function outboxHolds(count: number): Promise<void> {
  for (let i = 0; i < 2500 && (await outbox.names()).length < count; i++) await pause(2);
  await pause(3);
}

/** Waits until the outbox holds `count` whole mails (5 s at most), then counts them by recipient. */
async function mailsByRecipient(count: number): Promise<Map<string, number>> {
  let read: (Mail | null)[] = [];
  for (let i = 0; i < 200; i++) {
    read = await Promise.all((await outbox.names()).map((f) => outbox.read(f)));
    if (read.length >= count && read.every((m) => m !== null)) break;
    await pause(25);
  }
  assert.equal(read.length, count, 'mails in the outbox');
  const by = new Map<string, number>();
  for (const m of read) by.set(m?.to ?? '', (by.get(m?.to ?? '') ?? 0) + 1);
  return by;
}

/** One visitor asking for a link: a fresh browser GETs the form, then POSTs it (the answer of the POST). */
async function askForLink(email: string): Promise<Answer> {
  const b = new FormBrowser(srv.base, srv.web);
  const page = await b.get('/account/sign-in');
  assert.equal(page.status, 200);
  return b.post('/account/sign-in', { ...hiddenFields(page.text, '/account/sign-in'), email });
}

/** Signs up `email` the whole way (link by mail, confirm page, confirm POST): afterwards the address has an account. */
async function signUp(email: string): Promise<void> {
  const b = new FormBrowser(srv.base, srv.web);
  const before = await outbox.names();
  const page = await b.get('/account/sign-in');
  const sent = await b.post('/account/sign-in', { ...hiddenFields(page.text, '/account/sign-in'), email });
  assert.equal(sent.status, 303);
  const link = new URL((await outbox.next(before, 2000, (m) => m.to === email)).link);
  assert.equal(link.origin + link.pathname, `${srv.web}/account/confirm`);
  const confirmPage = await b.get(link.pathname + link.search);
  assert.equal(confirmPage.status, 200);
  const done = await b.post('/account/confirm', hiddenFields(confirmPage.text, '/account/confirm'));
  assert.equal(done.status, 303);
  assert.equal(done.headers.get('location'), '/account');
  const dash = await b.get('/account');
  assert.equal(dash.status, 200);
  assert.ok(dash.text.includes(email), 'the dashboard of the new account names the address');
}

let fresh = 0;
const freshAddress = (): string => `nobody-${++fresh}-${process.pid}@example.org`;

/**
 * Asks for a link for every pair's `a` and `b` address, the two in random order, one request at a
 * time (after a few discarded requests that warm the code paths up). Every answer must be the one
 * any other gets; returns the POST round trips of both groups, pair by pair.
 *
 * `mails(email)` says whether this request for `email` issues a link (it is asked once per request,
 * in order). The next request waits until that mail is in the outbox: the link is issued and mailed
 * after the answer leaves, and that work, still running, would slow whichever request came next.
 * A request that mails nothing is followed by the other group's request three times in four (its
 * partner when it goes first, and half the time the next pair's first), so without the wait the
 * group that mails less was measured on a busier server: in CI, a limited address's median came
 * out 0.7 ms above fresh addresses' with the same 10th percentile.
 */
async function interleaved(pairs: readonly (readonly [string, string])[], mails: (email: string) => boolean): Promise<{ a: number[]; b: number[] }> {
  let expected = (await outbox.names()).length;
  const ask = async (email: string): Promise<Answer> => {
    const answer = await askForLink(email);
    if (mails(email)) expected++;
    await outboxHolds(expected);
    return answer;
  };
  for (let i = 0; i < 20; i++) await ask(freshAddress());
  const a: number[] = [];
  const b: number[] = [];
  let reference: unknown;
  const check = (answer: Answer, email: string): void => {
    assert.equal(answer.status, 303, `the answer for ${email}`);
    assert.equal(answer.headers.get('location'), '/account/sign-in/sent');
    reference ??= observable(answer);
    assert.deepEqual(observable(answer), reference, `the answer for ${email} is the one every other request gets`);
  };
  for (const [ea, eb] of pairs) {
    // Which of the pair goes first is a coin toss, so neither group always follows the other.
    const order = Math.random() < 0.5 ? [ea, eb] : [eb, ea];
    const answers = new Map<string, Answer>();
    for (const email of order) answers.set(email, await ask(email));
    for (const email of order) check(answers.get(email)!, email);
    a.push(answers.get(ea)!.ms);
    b.push(answers.get(eb)!.ms);
  }
  return { a, b };
}

function assertIndistinguishable(t: TestContext, times: { a: number[]; b: number[] }, a: string, b: string): void {
  const c = compareTimings(times.a, times.b);
  t.diagnostic(describeComparison(c, a, b));
  const iqr = (xs: readonly number[]): string => {
    const s = Float64Array.from(xs).sort();
    return (sortedQuantile(s, 0.75) - sortedQuantile(s, 0.25)).toFixed(3);
  };
  t.diagnostic(`interquartile ranges: ${a} ${iqr(times.a)} ms, ${b} ${iqr(times.b)} ms`);
  assert.deepEqual(c.reasons, [], `the time of the answer tells ${a} from ${b}: ${describeComparison(c, a, b)}`);
}

// ---------------------------------------------------------------- the tests

describe('the timing oracle (compareTimings) on synthetic samples', () => {
  const SEEDS = [1, 2, 3, 4, 5, 6, 7, 8];
  const toldApart = (a: number[], b: number[]): boolean => compareTimings(a, b).reasons.length > 0;
  test('80 pairs on a quiet machine: one path 2 ms slower is told apart, either way round', () => {
    for (const seed of SEEDS) {
      const { a, b } = syntheticPairs(seed, 80, 2, false);
      assert.ok(toldApart(a, b) && toldApart(b, a), `seed ${seed}: 2 ms passed as noise`);
    }
  });
  test('80 pairs on a quiet or a busy machine: samples of one distribution are not told apart', () => {
    for (const busy of [false, true]) {
      for (const seed of SEEDS) {
        const { a, b } = syntheticPairs(seed + 100, 80, 0, busy);
        assert.deepEqual(compareTimings(a, b).reasons, [], `seed ${seed}${busy ? ', busy' : ''}: identical paths were told apart`);
      }
    }
  });
  test('80 pairs on a busy machine: the tolerance widens with the noise (2 ms can hide in it), but a difference the size of the noise is told apart', () => {
    // What the oracle trades for not flaking: with a spread of 12 ms, 2 ms is found in about one
    // run in three (93 of 300 seeds); 10 ms in every one. (Identical paths: 0 of 300 quiet, 2 of 300 busy.)
    for (const seed of SEEDS) {
      const { a, b } = syntheticPairs(seed + 200, 80, 10, true);
      assert.ok(toldApart(a, b) && toldApart(b, a), `seed ${seed}: 10 ms passed as noise`);
    }
  });
  test('80 pairs a tenth of the floor apart, steady and tight: not told apart (the floor holds for the rank test too)', () => {
    // Like this file's CI failure: medians 0.95 and 0.90 ms, a spread of a few hundredths. The
    // unshifted rank test tells these apart in every seed; a difference this size is not one a
    // client across a network could use, and it is below what this test claims to resolve.
    for (const seed of SEEDS) {
      const random = rng(seed + 300);
      const one = (): number => 0.9 * Math.exp(0.05 * normal(random));
      const a = Array.from({ length: 80 }, one);
      const b = Array.from({ length: 80 }, () => one() + 0.05);
      assert.ok(mannWhitney(a, b).p < ALPHA, `seed ${seed}: the unshifted rank test should resolve 0.05 ms here`);
      assert.deepEqual(compareTimings(a, b).reasons, [], `seed ${seed}: 0.05 ms was told apart`);
      assert.ok(
        toldApart(
          a,
          b.map((x) => x + 1),
        ),
        `seed ${seed}: 1 ms more on the same spread passed as noise`,
      );
    }
  });
  test('the Mann–Whitney statistic against hand-computed values', () => {
    // No overlap: U = 0, the smallest there is; z by the continuity-corrected normal approximation.
    const apart = mannWhitney([1, 2, 3], [4, 5, 6]);
    assert.equal(apart.u, 0);
    assert.ok(Math.abs(apart.z - 4 / Math.sqrt(5.25)) < 1e-9);
    // Identical samples: U is exactly half of n1·n2, p = 1.
    const same = mannWhitney([1, 2, 2, 3], [1, 2, 2, 3]);
    assert.equal(same.u, 8);
    assert.equal(same.z, 0);
    assert.ok(same.p > 0.999_999);
  });
});

describe('POST /account/sign-in answers alike whether the address has an account or not', () => {
  before(async () => {
    tmp = await mkdtemp(path.join(os.tmpdir(), 'fe-enum-'));
    dataDir = path.join(tmp, 'data');
    await mkdir(dataDir);
    outbox = new Outbox(dataDir);
    // No snapshot: the account pages do not need one.
    srv = await startServerProcess(tmp);
  });
  after(async () => {
    try {
      await srv.stop();
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  });

  const PAIRS = 80;

  test('addresses with an account (each within its 3 mails a window) against addresses without one', async (t) => {
    // 40 accounts, each signed up through the real sign-in (1 mail), then asked for twice more: all
    // 80 requests of the group are under the mail limit, like every request for a fresh address, so
    // the two groups differ in one thing only — whether the address has an account.
    const known = Array.from({ length: PAIRS / 2 }, (_, i) => `known-${i}@example.org`);
    for (let i = 0; i < known.length; i += 8) await Promise.all(known.slice(i, i + 8).map(signUp));
    const before = (await outbox.names()).length;
    const unknown = Array.from({ length: PAIRS }, () => freshAddress());
    const pairs = unknown.map((u, i) => [known[i % known.length] ?? '', u] as const);
    const times = await interleaved(pairs, () => true);
    // Both groups took the mailing path: a link to every request (and to the 20 warming up), none lost, none extra.
    const by = await mailsByRecipient(before + 20 + 2 * PAIRS);
    for (const email of known) assert.equal(by.get(email), 3, `the mails to ${email}: its sign-up and 2 more`);
    for (const email of unknown) assert.equal(by.get(email), 1, `the mail to ${email}`);
    assertIndistinguishable(t, times, 'with an account', 'without');
  });

  test('an address with an account past its 3 mails a window against fresh addresses', async (t) => {
    // One account, asked for 80 times: its first 2 requests still mail a link (the sign-up spent the
    // first of 3), the other 78 are over the per-address limit and send nothing. The answer must not
    // tell, neither in its bytes nor in its time, or the limit tells who signed in lately.
    const email = 'known-limited@example.org';
    await signUp(email);
    const before = (await outbox.names()).length;
    const unknown = Array.from({ length: PAIRS }, () => freshAddress());
    let mailsLeft = 2;
    const times = await interleaved(
      unknown.map((u) => [email, u] as const),
      (to) => to !== email || mailsLeft-- > 0,
    );
    const by = await mailsByRecipient(before + 20 + 2 + PAIRS);
    assert.equal(by.get(email), 3, 'the limit: 3 mails to the address in the window, whatever was asked');
    assertIndistinguishable(t, times, 'limited address', 'fresh addresses');
  });
});
