/** Types of scripts/buildWeb.mjs (see there). */
export declare const WEB_OUT: string;
export declare const MANIFEST: string;
export declare function webDir(root?: string): string;
export declare function isWebStale(root?: string): boolean;
export declare class WebBuildError extends Error {}
export declare function compileDocuments(web?: string): Promise<string>;
export declare function buildWeb(root?: string): Promise<string>;
export declare function buildWebOrExit(): Promise<void>;
export declare function ensureWebBuilt(root?: string): Promise<string>;
export declare function typecheckWeb(web?: string): void;
