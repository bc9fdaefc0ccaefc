/**
 * Where the bot token may go. Login may answer a base URL for the API; it is used only when it is
 * https on weixin.qq.com (or a host under it) or is exactly the configured origin, so a login answer
 * can never send the token to anyone else.
 */

/** The origin of `raw` when it may carry the token, given the configured origin; null otherwise. */
export function admissibleBaseUrl(raw: string, configured: string): string | null {
  let url: URL;
  try {
    url = new URL(raw.trim());
  } catch {
    return null;
  }
  if (url.username || url.password || url.search || url.hash) return null;
  if (url.pathname !== "/" && url.pathname !== "") return null;
  let own: string | null = null;
  try {
    own = new URL(configured).origin;
  } catch {
    own = null;
  }
  if (url.origin === own) return url.origin;
  const host = url.hostname.toLowerCase();
  if (url.protocol === "https:" && (host === "weixin.qq.com" || host.endsWith(".weixin.qq.com")))
    return url.origin;
  return null;
}
