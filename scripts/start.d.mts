/** Types of scripts/start.mjs, for the tests that exercise it. */
export declare function parleyArgs(args: readonly string[]): string[];
