/**
 * What a WeChat user SEES of a bot message, as the fake records it: iLink renders Markdown, so the
 * markup it draws is removed (links to their labels, emphasis, strike and code delimiters, fence
 * lines). Deliberately simple: the reader's view a test asserts on, not a Markdown engine.
 */
const LINK = /\[([^\]\n]*)\]\((?:[^()\n]|\([^()\n]*\))*\)/g;
const FENCE_LINE = /^\s*(```|~~~).*$/gm;
const DELIMITERS = /\*\*|__|~~|\*|`/g;

export function renderVisible(md: string): string {
  return md.replace(LINK, "$1").replace(FENCE_LINE, "").replace(DELIMITERS, "");
}
