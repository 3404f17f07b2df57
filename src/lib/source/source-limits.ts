/**
 * What the YAML reader accepts, in one place: each limit bounds the work or the output that one
 * careless or hostile file can cause (stack depth, alias expansion, length of the error).
 */

/** Deepest nesting of collections accepted; the parser recurses, and 100,000 levels exhaust its stack. */
export const MAX_NESTING = 64;
/** Problems listed per file; the rest are counted in one last line. */
export const MAX_ISSUES = 50;
/** Longest reason kept (a reason may quote the value it refuses). */
export const MAX_REASON_LENGTH = 300;
/** Alias expansions allowed where aliases are (yaml's own count): a shared block, not a bomb. */
export const MAX_ALIAS_COUNT = 100;
