// Work a route starts once its answer has left: a sign-in link is issued and mailed after the page
// saying it was, so neither the answer's bytes nor its timing tell one address from another.
// Tracked, so that stopping the server finishes it before the ledger and the mailer close: a link
// asked for during a deploy still arrives, and nothing writes into DATA_DIR after stop() resolves.
export class AfterAnswer {
  private readonly pending = new Set<Promise<void>>();
  private readonly onError: (err: unknown) => void;

  constructor(onError: (err: unknown) => void) {
    this.onError = onError;
  }

  /**
   * Runs `work` on a later turn than the answer's: setImmediate, so the answer is written first and
   * the work's messages (a ledger commit) do not compete with it for a busy CPU.
   */
  run(work: () => Promise<void>): void {
    const done: Promise<void> = new Promise<void>((resolve) => setImmediate(resolve))
      .then(work)
      .catch(this.onError)
      .finally(() => this.pending.delete(done));
    this.pending.add(done);
  }

  /** Resolves once all work started so far has ended, or after `timeoutMs`: the count still running. */
  async settle(timeoutMs: number): Promise<number> {
    const deadline = Date.now() + timeoutMs;
    // Work may start more work (none does today): settle until none is left or time is up.
    while (this.pending.size > 0 && Date.now() < deadline) {
      let timer: NodeJS.Timeout | undefined;
      const late = new Promise<void>((resolve) => (timer = setTimeout(resolve, deadline - Date.now())));
      await Promise.race([Promise.all(this.pending), late]);
      clearTimeout(timer);
    }
    return this.pending.size;
  }
}
