/**
 * Slack's file hosts, derived from the one configured origin, and the inbound half: a file a user
 * shared is downloaded from its `url_private_download` with the BOT TOKEN, so the URL (which comes
 * from the event, not from parley) is validated before any byte moves or any header is attached:
 * HTTPS, a host derived from `slack.apiUrl` (files.slack.com for slack.com), the default port, no
 * credentials in the URL, no redirects (a redirect would carry the token to wherever it points),
 * bounded in time and bytes. Caps per kind, classification and temp files are the shared ingest's.
 */
import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment } from "../messaging/files/ingest.js";
import { SLACK_API_URL } from "./index.js";

/** Backstop on bytes read per file, above every shared ingest cap (which is the real bound). */
export const DEFAULT_FETCH_MAX_BYTES = 64 * 1024 * 1024;

/** Why a file URL is not fetched; the message ends up in the user's refusal line (never the URL). */
export class FileUrlRefused extends Error {}

/**
 * Where Slack's files may be fetched from and uploaded to: Slack's own file host for the public
 * API, or exactly the configured origin for any other (a proxy, an Enterprise gateway, the test
 * fake), which the operator named and so is trusted as given, scheme included.
 */
export interface FileOrigins {
  hosts: ReadonlySet<string>;
  exactOrigin?: string;
}

export function fileOriginsFor(apiUrl: string): FileOrigins {
  const api = new URL(apiUrl);
  if (apiUrl.replace(/\/+$/, "") === SLACK_API_URL) return { hosts: new Set(["files.slack.com"]) };
  return { hosts: new Set(), exactOrigin: api.origin };
}

/** The URL, admitted; or FileUrlRefused naming the rule that failed. */
export function admitFileUrl(ref: string, origins: FileOrigins): URL {
  let url: URL;
  try {
    url = new URL(ref);
  } catch {
    throw new FileUrlRefused("the file has no valid URL");
  }
  // Userinfo would be sent as credentials to whoever answers.
  if (url.username || url.password) throw new FileUrlRefused("the URL carries credentials");
  if (origins.exactOrigin !== undefined && url.origin === origins.exactOrigin) return url;
  if (url.protocol !== "https:") throw new FileUrlRefused("only HTTPS downloads are allowed");
  if (!origins.hosts.has(url.hostname))
    throw new FileUrlRefused(`${url.hostname} is not Slack's file server`);
  // A non-default port is not the file server's front door, whatever the host name says.
  if (url.port !== "") throw new FileUrlRefused("the URL names a non-default port");
  return url;
}

export interface FileFetchOptions {
  token: string;
  origins: FileOrigins;
  timeoutMs?: number;
  maxBytes?: number;
  timers?: Timers;
  /** Injected for tests; the global fetch otherwise. */
  fetch?: typeof fetch;
}

/** The shared ingest's byte source for one shared file; nothing is fetched until it is read. */
export function slackAttachment(att: InboundAttachment, o: FileFetchOptions): Attachment {
  return {
    name: att.name,
    ...(att.mimeType !== undefined ? { mimeType: att.mimeType } : {}),
    ...(att.size !== undefined ? { size: att.size } : {}),
    read: (signal) =>
      boundedDownload(
        // Validated before any connection: a refused URL costs no request, and no token goes out.
        () => admitFileUrl(att.ref, o.origins),
        signal,
        {
          maxBytes: o.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
          serverName: "Slack's file server",
          headers: { authorization: `Bearer ${o.token}` },
          ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
          ...(o.timers ? { timers: o.timers } : {}),
          ...(o.fetch ? { fetch: o.fetch } : {}),
        },
      ),
  };
}
