/** Types of scripts/build.mjs, for the tests that exercise it. */
export declare const ROOT: string;
export declare const STAMP: string;
export declare function fingerprint(root?: string): string;
export declare function buildIsFresh(root?: string): boolean;
export declare function build(root?: string): boolean;
export declare function buildIfStale(root?: string): boolean;
