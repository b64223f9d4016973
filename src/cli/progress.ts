/**
 * A progress line for long jobs: `\r  1234/4096 databases (30%) 12.3 s` redrawn in place on a
 * terminal (at most every 100 ms), or one line per 10% step when the output is a log or a pipe.
 */
import { seconds } from './format.ts';

export interface Progress {
  update(done: number, total: number): void;
  /** Ends the line (terminal) or prints the final state if it was not printed yet. */
  finish(): void;
}

export function progressLine(
  stream: { write(text: string): unknown; isTTY?: boolean },
  unit: string,
  now: () => number = Date.now,
): Progress {
  const started = now();
  const tty = stream.isTTY === true;
  let lastDraw = -Infinity;
  let lastStep = -1;
  let last: { done: number; total: number } | undefined;
  let printed = '';
  const text = (done: number, total: number): string => {
    const pct = total === 0 ? 100 : Math.floor((done / total) * 100);
    return `  ${done}/${total} ${unit} (${pct}%) ${seconds(now() - started)}`;
  };
  return {
    update(done, total) {
      last = { done, total };
      if (tty) {
        const t = now();
        if (done < total && t - lastDraw < 100) return;
        lastDraw = t;
        printed = text(done, total);
        stream.write(`\r${printed}\x1b[K`);
        return;
      }
      const step = total === 0 ? 10 : Math.floor((done / total) * 10);
      if (step > lastStep) {
        lastStep = step;
        printed = text(done, total);
        stream.write(`${printed}\n`);
      }
    },
    finish() {
      if (last === undefined) return;
      if (tty) {
        stream.write(`\r${text(last.done, last.total)}\x1b[K\n`);
      } else if (Math.floor((last.done / Math.max(1, last.total)) * 10) > lastStep) {
        stream.write(`${text(last.done, last.total)}\n`);
      }
    },
  };
}
