// A progress bar on long work when stdout is a terminal; silence otherwise (pipes, CI, --json).
import cliProgress from 'cli-progress';

export interface Progress {
  update(done: number, total: number, label: string): void;
  stop(): void;
}

export function progress(enabled: boolean): Progress {
  if (!enabled || !process.stdout.isTTY) return { update: () => {}, stop: () => {} };
  const bar = new cliProgress.SingleBar(
    { format: ' {label} [{bar}] {value}/{total}', hideCursor: true, clearOnComplete: true },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let currentLabel = '';
  return {
    update(done, total, label) {
      if (!started || label !== currentLabel) {
        if (started) bar.stop();
        bar.start(total, done, { label });
        started = true;
        currentLabel = label;
      } else bar.update(done, { label });
    },
    stop() {
      if (started) bar.stop();
    },
  };
}
