/**
 * Where WeCom may send us to. A callback hands over URLs (a media object, a response_url) and the
 * channel fetches or posts to them, so a URL is followed only when its origin is one the operator
 * admitted (wecom.mediaHosts): HTTPS, exact host and port, no credentials in it. Plain http (and ws)
 * is admitted only for a loopback host, which is how a local fake or proxy is named: anywhere else it
 * would carry the answer (or, for the socket, the secret) in the clear.
 */

/** WeCom's media CDN and the host its response_url points at. */
export const WECOM_MEDIA_HOSTS: readonly string[] = [
  "ww-aibot-img-1258476243.cos.ap-guangzhou.myqcloud.com",
  "qyapi.weixin.qq.com",
];

const LOOPBACK = new Set(["127.0.0.1", "localhost", "[::1]"]);

/** An admitted origin as written (`host`, `https://host[:port]`, or loopback `http://`); null when not. */
export function parseOrigin(entry: string): string | null {
  const text = entry.trim();
  const withScheme = /^[a-z][a-z0-9+.-]*:\/\//i.test(text) ? text : `https://${text}`;
  let url: URL;
  try {
    url = new URL(withScheme);
  } catch {
    return null;
  }
  if (url.username || url.password || (url.pathname !== "/" && url.pathname !== "") || url.search || url.hash)
    return null;
  if (url.protocol === "https:") return url.origin;
  if (url.protocol === "http:" && LOOPBACK.has(url.hostname)) return url.origin;
  return null;
}

/** The socket URL, if admissible: wss anywhere, ws only on loopback (the secret rides on it). */
export function admissibleSocketUrl(raw: string): boolean {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return false;
  }
  if (url.username || url.password) return false;
  if (url.protocol === "wss:") return true;
  return url.protocol === "ws:" && LOOPBACK.has(url.hostname);
}

export class OriginPolicy {
  private readonly origins: ReadonlySet<string>;

  constructor(entries: readonly string[]) {
    this.origins = new Set(entries.map(parseOrigin).filter((o): o is string => o !== null));
  }

  /** The URL when its origin is admitted (and it carries no credentials); null otherwise. */
  admit(raw: string): URL | null {
    let url: URL;
    try {
      url = new URL(raw);
    } catch {
      return null;
    }
    if (url.username || url.password) return null;
    return this.origins.has(url.origin) ? url : null;
  }
}
