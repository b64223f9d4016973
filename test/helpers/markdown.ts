/**
 * Reading the project's own Markdown (README.md and docs/*.md) for the docs tests: the pages, their
 * headings as GitHub anchors, their relative links, their table rows and their fenced examples.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(import.meta.dirname, '../..');

/** README.md and every docs/*.md, as paths relative to the project root. */
export function docPages(root = ROOT): string[] {
  const docs = readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => `docs/${f}`);
  return ['README.md', ...docs];
}

/** The text with fenced code blocks blanked (line count kept), so nothing inside a fence counts as a heading or a link. */
export function withoutFences(text: string): string {
  let inFence = false;
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        inFence = !inFence;
        return '';
      }
      return inFence ? '' : line;
    })
    .join('\n');
}

/**
 * GitHub's anchor for a heading: lower case, Markdown punctuation and other symbols dropped, spaces
 * to hyphens; a repeated heading gets `-1`, `-2`, … For example `What a query cost: \`extensions.cost\``
 * → `what-a-query-cost-extensionscost`, and `Writes that span shards` → `writes-that-span-shards`.
 */
export function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/<[^>]*>/g, '')
    .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/[^\p{L}\p{N}\- _]/gu, '')
    .replace(/ /g, '-');
}

/** Every anchor a page offers: its headings' slugs (duplicates numbered as GitHub numbers them). */
export function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const out = new Set<string>();
  for (const line of withoutFences(text).split('\n')) {
    const m = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!m) continue;
    const base = slug(m[1]!);
    const n = seen.get(base) ?? 0;
    seen.set(base, n + 1);
    out.add(n === 0 ? base : `${base}-${n}`);
  }
  return out;
}

export interface Link {
  readonly line: number;
  readonly target: string;
}

/** Every inline link and image target outside code (fences and `code spans`), with its line number. */
export function linksOf(text: string): Link[] {
  const out: Link[] = [];
  withoutFences(text)
    .split('\n')
    .forEach((raw, i) => {
      const line = raw.replace(/`[^`]*`/g, '');
      for (const m of line.matchAll(/!?\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)) out.push({ line: i + 1, target: m[1]! });
    });
  return out;
}

/** Cells of every Markdown table row (`| a | b |`), split on unescaped pipes, trimmed. */
export function tableRows(text: string): string[][] {
  return withoutFences(text)
    .split('\n')
    .filter((l) => l.startsWith('|') && !/^\|[\s|:-]+\|$/.test(l))
    .map((l) =>
      l
        .slice(1, l.endsWith('|') ? -1 : undefined)
        .split(/(?<!\\)\|/)
        .map((c) => c.trim()),
    );
}

export interface Fence {
  readonly page: string;
  /** 1-based line of the opening fence. */
  readonly line: number;
  /** The info string: `graphql`, `graphql-error`, `sh`, … */
  readonly lang: string;
  readonly body: string;
}

/** Every fenced code block of a page. */
export function fencesOf(page: string, text: string): Fence[] {
  const out: Fence[] = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const open = /^\s*```\s*([\w-]*)/.exec(lines[i]!);
    if (!open) continue;
    const start = i;
    const body: string[] = [];
    for (i++; i < lines.length && !/^\s*```\s*$/.test(lines[i]!); i++) body.push(lines[i]!);
    out.push({ page, line: start + 1, lang: open[1] ?? '', body: body.join('\n') });
  }
  return out;
}

export function readPage(page: string, root = ROOT): string {
  return readFileSync(join(root, page), 'utf8');
}
