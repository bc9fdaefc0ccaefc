/**
 * Files users send on Teams: which parts of an activity are files (normalize), and the byte source
 * the shared ingest reads for each, only when the turn that answers the message starts. Two kinds,
 * with OPPOSITE credentials:
 *
 * - a file shared in a personal chat arrives as `file.download.info`, whose downloadUrl Microsoft
 *   documents as directly fetchable (a short-lived, pre-authorized SharePoint/OneDrive link). It is
 *   fetched with no credential, ever: the Connector token is credential-equivalent and that host is
 *   not one parley configured.
 * - a pasted image arrives with a contentUrl, served by the Connector: the bot's token is offered
 *   only when the URL's host is an allowed Connector host (teams.connectorHosts), else none.
 *
 * A host that is not a configured Connector host is vetted twice: by NAME (https, the default port,
 * no IP literal, not a local name) and by ADDRESS (every answer public: a public name can point at
 * 127.0.0.1 or 169.254.169.254), and the socket then dials exactly the addresses vetted (a second
 * lookup could answer differently a microsecond later). At most three redirects, each hop vetted and
 * its credential decided afresh; the bytes READ are capped whatever the headers claim. Anything
 * else an activity carries is named by its type in the refusal and never fetched.
 */
import { lookup as dnsLookup } from "node:dns/promises";
import { isIP } from "node:net";
import { Agent, fetch as undiciFetch } from "undici";
import type { Timers } from "../messaging/base/clock.js";
import type { InboundAttachment } from "../messaging/channel/transport.js";
import type { DownloadTarget } from "../messaging/files/bounded-download.js";
import { boundedDownload } from "../messaging/files/bounded-download.js";
import type { Attachment } from "../messaging/files/ingest.js";
import { ADAPTIVE_CARD, FILE_DOWNLOAD_INFO, type TeamsActivity } from "./wire.js";

/** Backstop on bytes read per file, above every shared ingest cap (which is the real bound). */
export const DEFAULT_FETCH_MAX_BYTES = 64 * 1024 * 1024;
export const MAX_REDIRECTS = 3;

/** What a descriptor's `ref` holds: the kind decides the credential, the URL where it goes. */
type FileRef = { k: "download" | "inline"; u: string } | { k: "unsupported"; t: string };

function refOf(ref: FileRef): string {
  return JSON.stringify(ref);
}

function parseRef(ref: string): FileRef | null {
  try {
    const v = JSON.parse(ref) as Partial<{ k: string; u: string; t: string }>;
    if ((v.k === "download" || v.k === "inline") && typeof v.u === "string") return { k: v.k, u: v.u };
    if (v.k === "unsupported" && typeof v.t === "string") return { k: "unsupported", t: v.t };
  } catch {
    // An unreadable ref is refused below.
  }
  return null;
}

/** Content types that are the message itself or parley's own widgets: never files. */
function isNotAFile(contentType: string): boolean {
  return (
    contentType === "text/html" ||
    contentType === ADAPTIVE_CARD ||
    contentType.startsWith("application/vnd.microsoft.card.")
  );
}

/** The files in one activity, as descriptors (nothing is fetched here). */
export function inboundFilesOf(a: Pick<TeamsActivity, "attachments">): InboundAttachment[] {
  const out: InboundAttachment[] = [];
  for (const att of a.attachments ?? []) {
    const type = att.contentType;
    if (isNotAFile(type)) continue;
    if (type === FILE_DOWNLOAD_INFO) {
      const url = (att.content as { downloadUrl?: unknown } | undefined)?.downloadUrl;
      if (typeof url === "string")
        out.push({ name: att.name || "file", ref: refOf({ k: "download", u: url }) });
      continue;
    }
    if (type.startsWith("image/") && typeof att.contentUrl === "string") {
      const ext = type.slice(6).split(/[;+]/)[0] || "img";
      out.push({
        name: att.name || `image.${ext}`,
        mimeType: type,
        ref: refOf({ k: "inline", u: att.contentUrl }),
      });
      continue;
    }
    // Reported by type, never by a sender-chosen name, and never fetched.
    out.push({ name: type.slice(0, 80), ref: refOf({ k: "unsupported", t: type.slice(0, 80) }) });
  }
  return out;
}

/** Why a file is not fetched; the message reaches the user's refusal line (never a URL). */
export class AttachmentRefused extends Error {}

export type Resolve = (host: string) => Promise<{ address: string; family: number }[]>;

export interface TeamsFileOptions {
  /** Whether a URL is on an allowed Connector host (the origin parley already sends its token to). */
  isConnector(url: URL): boolean;
  /** The bot's Connector token, asked for only when a hop goes to a Connector host for an image. */
  token(): Promise<string>;
  timers?: Timers;
  timeoutMs?: number;
  maxBytes?: number;
  /** DNS, injectable for tests; `dns.lookup` with every answer otherwise. */
  resolve?: Resolve;
}

const defaultResolve: Resolve = (host) => dnsLookup(host, { all: true, verbatim: true });

/** IPv4 ranges that are not the public internet (RFC 6890 and friends). */
const V4_BLOCKED: readonly [number, number][] = [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.88.99.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
].map(([net, bits]) => [v4ToInt(net as string), bits as number]);

function v4ToInt(ip: string): number {
  return ip.split(".").reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Public(ip: string): boolean {
  const n = v4ToInt(ip);
  return !V4_BLOCKED.some(
    ([net, bits]) => Math.floor(n / 2 ** (32 - bits)) === Math.floor(net / 2 ** (32 - bits)),
  );
}

/** The 16 bytes of an IPv6 address (`::` expanded; a dotted IPv4 tail read as two groups). */
function v6Groups(ip: string): number[] | null {
  let text = ip.toLowerCase().split("%")[0] as string;
  const tail = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (tail) {
    const n = v4ToInt(tail[1] as string);
    text = `${text.slice(0, tail.index)}${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, rest] = text.split("::") as [string, string | undefined];
  const left = head ? head.split(":") : [];
  const right = rest ? rest.split(":") : [];
  const fill = rest === undefined ? 0 : 8 - left.length - right.length;
  if (fill < 0) return null;
  const groups = [...left, ...Array<string>(fill).fill("0"), ...right].map((g) =>
    Number.parseInt(g || "0", 16),
  );
  return groups.length === 8 && groups.every((g) => g >= 0 && g <= 0xffff) ? groups : null;
}

/** True only for an address on the public internet. */
export function isPublicAddress(ip: string): boolean {
  const family = isIP(ip);
  if (family === 4) return v4Public(ip);
  if (family !== 6) return false;
  const g = v6Groups(ip);
  if (!g) return false;
  const [a = 0, b = 0] = g;
  if (g.every((x) => x === 0)) return false; // ::
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return false; // ::1
  // IPv4-mapped (::ffff:a.b.c.d) and the NAT64 prefix: judged by the IPv4 address inside.
  if ((g.slice(0, 5).every((x) => x === 0) && g[5] === 0xffff) || (a === 0x64 && b === 0xff9b))
    return v4Public(`${(g[6] ?? 0) >> 8}.${(g[6] ?? 0) & 255}.${(g[7] ?? 0) >> 8}.${(g[7] ?? 0) & 255}`);
  if ((a & 0xfe00) === 0xfc00) return false; // unique local
  if ((a & 0xffc0) === 0xfe80) return false; // link-local
  if ((a & 0xff00) === 0xff00) return false; // multicast
  if (a === 0x2001 && b === 0x0db8) return false; // documentation
  if (a === 0x0100 && g.slice(1, 4).every((x) => x === 0)) return false; // discard-only
  return true;
}

/** Names that are local to every resolver, whatever DNS says (the root dot stripped first). */
function isLocalName(host: string): boolean {
  const h = host.replace(/\.$/, "").toLowerCase();
  return (
    h === "localhost" ||
    h.endsWith(".localhost") ||
    h.endsWith(".local") ||
    h.endsWith(".internal") ||
    !h.includes(".")
  );
}

type LookupCallback = (
  error: NodeJS.ErrnoException | null,
  address: string | { address: string; family: number }[],
  family?: number,
) => void;

/**
 * A `lookup` for one connection: the vetted host answers with exactly the vetted addresses (in the
 * single-address or the all-addresses form net.connect asks for); any other name is refused.
 */
export function pinnedLookup(host: string, vetted: readonly { address: string; family: number }[]) {
  const name = host.replace(/\.$/, "").toLowerCase();
  const pinned = vetted.map((a) => ({ address: a.address, family: a.family }));
  return (hostname: string, options: { all?: boolean }, callback: LookupCallback): void => {
    if (hostname.replace(/\.$/, "").toLowerCase() !== name || pinned.length === 0) {
      callback(new Error("refused: a connection to a host that was not vetted"), "", 0);
      return;
    }
    if (options.all) callback(null, pinned);
    else callback(null, pinned[0]?.address ?? "", pinned[0]?.family ?? 4);
  };
}

interface Vetted {
  target: DownloadTarget;
  agent?: Agent;
}

/**
 * One hop, admitted: a Connector host as configured (the image token when asked for), any other
 * host vetted by name and by every address, then pinned. Throws AttachmentRefused.
 */
async function vet(url: URL, wantsToken: boolean, o: TeamsFileOptions): Promise<Vetted> {
  if (url.protocol !== "https:") throw new AttachmentRefused("only HTTPS downloads are allowed");
  // Userinfo would be sent as credentials to whoever answers.
  if (url.username || url.password) throw new AttachmentRefused("the download address carries credentials");
  if (o.isConnector(url)) {
    const headers = wantsToken ? { authorization: `Bearer ${await o.token()}` } : undefined;
    return { target: { url, ...(headers ? { headers } : {}) } };
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.port !== "" && url.port !== "443")
    throw new AttachmentRefused("the download address names a non-default port");
  if (isIP(host) !== 0) throw new AttachmentRefused("the download address is a bare IP address");
  if (isLocalName(host)) throw new AttachmentRefused("the download address is a local name");
  let answers: { address: string; family: number }[];
  try {
    answers = await (o.resolve ?? defaultResolve)(host);
  } catch {
    throw new AttachmentRefused("the download host could not be resolved");
  }
  // Every answer, not only the one a connection would pick: which one that is is not ours to predict.
  if (answers.length === 0 || !answers.every((a) => isPublicAddress(a.address)))
    throw new AttachmentRefused("the download host resolves to a private address");
  // The socket dials what was vetted: no second lookup that could answer differently.
  const agent = new Agent({ connect: { lookup: pinnedLookup(host, answers) } });
  return { target: { url, dispatcher: agent }, agent };
}

/** The shared ingest's byte source for one Teams file descriptor; nothing is fetched until read. */
export function teamsAttachment(att: InboundAttachment, o: TeamsFileOptions): Attachment {
  return {
    name: att.name,
    ...(att.mimeType !== undefined ? { mimeType: att.mimeType } : {}),
    ...(att.size !== undefined ? { size: att.size } : {}),
    read: (signal) => download(att, signal, o),
  };
}

async function* download(
  att: InboundAttachment,
  signal: AbortSignal,
  o: TeamsFileOptions,
): AsyncGenerator<Uint8Array> {
  const ref = parseRef(att.ref);
  if (!ref) throw new AttachmentRefused("the attachment could not be read");
  if (ref.k === "unsupported")
    throw new AttachmentRefused(`Teams sent a ${ref.t} attachment, which is not read`);
  const wantsToken = ref.k === "inline";
  const agents: Agent[] = [];
  const admit = async (url: URL) => {
    const vetted = await vet(url, wantsToken, o);
    if (vetted.agent) agents.push(vetted.agent);
    return vetted.target;
  };
  try {
    yield* boundedDownload(
      () => {
        let url: URL;
        try {
          url = new URL(ref.u);
        } catch {
          throw new AttachmentRefused("the attachment has no valid download address");
        }
        return admit(url);
      },
      signal,
      {
        maxBytes: o.maxBytes ?? DEFAULT_FETCH_MAX_BYTES,
        serverName: "the file server",
        fetch: undiciFetch as unknown as typeof fetch,
        redirects: { max: MAX_REDIRECTS, admit },
        ...(o.timeoutMs !== undefined ? { timeoutMs: o.timeoutMs } : {}),
        ...(o.timers ? { timers: o.timers } : {}),
      },
    );
  } finally {
    for (const agent of agents) void agent.close().catch(() => undefined);
  }
}
