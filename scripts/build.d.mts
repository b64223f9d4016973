/** Types of scripts/build.mjs (see there). */
export declare const ROOT: string;
export declare function cliPath(root?: string): string;
export declare function isStale(root?: string): boolean;
export declare function build(root?: string): string;
export declare function ensureBuilt(root?: string): string;
/** Bundles bench/main.ts into dist/bench.mjs (and its .map); returns its absolute path. */
export declare function buildBench(root?: string): string;
