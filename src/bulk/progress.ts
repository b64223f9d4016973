/**
 * A progress bar for bulk loads on stderr: redrawn in place on a terminal (at most every 200 ms),
 * one line per 10% otherwise (logs, pipes, CI).
 *
 *   [##########----------]  50%  5.1M/10.2M rows  98.2k rows/s  52 s
 */
export interface ProgressBar {
  add(rows: number): void;
  finish(): void;
}

export interface ProgressStream {
  write(text: string): unknown;
  readonly isTTY?: boolean;
}

export function human(n: number): string {
  if (n >= 1e6) return `${(n / 1e6).toFixed(1)}M`;
  if (n >= 1e4) return `${(n / 1e3).toFixed(1)}k`;
  return String(Math.round(n));
}

export function progressBar(stream: ProgressStream, total: number, unit = 'rows', now: () => number = Date.now): ProgressBar {
  const started = now();
  const tty = stream.isTTY === true;
  let done = 0;
  let lastDraw = -Infinity;
  let lastStep = -1;
  let finished = false;
  const line = (): string => {
    const frac = total === 0 ? 1 : Math.min(1, done / total);
    const width = 20;
    const filled = Math.round(frac * width);
    const secs = (now() - started) / 1000;
    const rate = secs > 0 ? done / secs : 0;
    return `[${'#'.repeat(filled)}${'-'.repeat(width - filled)}] ${String(Math.floor(frac * 100)).padStart(3)}%  ${human(done)}/${human(total)} ${unit}  ${human(rate)} ${unit}/s  ${secs.toFixed(0)} s`;
  };
  return {
    add(rows) {
      done += rows;
      if (finished) return;
      if (tty) {
        const t = now();
        if (t - lastDraw < 200 && done < total) return;
        lastDraw = t;
        stream.write(`\r${line()}\x1b[K`);
        return;
      }
      const step = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (step > lastStep) {
        lastStep = step;
        stream.write(`${line()}\n`);
      }
    },
    finish() {
      if (finished) return;
      finished = true;
      if (tty) stream.write(`\r${line()}\x1b[K\n`);
      else if ((total === 0 ? 10 : Math.floor((done / total) * 10)) > lastStep || lastStep < 0) stream.write(`${line()}\n`);
    },
  };
}
