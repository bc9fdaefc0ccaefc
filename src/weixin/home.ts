/**
 * What Weixin keeps in the data home, none of it read by an SDK: the bot token in the secrets file
 * ($PARLEY_HOME/.env, owner-only, as WEIXIN_BOT_TOKEN: never in config), the link record (the bot's
 * id, the person who scanned, who is the owner, and an admitted base URL; no secret) and the running
 * channel's health (whether the session is paused after `-14`), which `parley doctor` reads back.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

export const TOKEN_ENV = "WEIXIN_BOT_TOKEN";
const DIR = "weixin";

export interface LinkRecord {
  /** `…@im.bot`. */
  botId: string;
  /** `…@im.wechat`: who scanned the QR code; the channel's owner. */
  ownerUserId: string;
  /** The API origin login named, already admitted (origins.ts); absent: the configured one. */
  baseUrl?: string;
  linkedAt: number;
}

export interface WeixinHealth {
  /** Epoch ms the `-14` pause ends; 0 when not paused. */
  pausedUntil: number;
  at: number;
}

export const secretsFile = (home: string) => join(home, ".env");
export const linkFile = (home: string) => join(home, DIR, "link.json");
export const healthFile = (home: string) => join(home, DIR, "health.json");

function writeAtomic(path: string, text: string): void {
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  renameSync(tmp, path);
  chmodSync(path, 0o600);
}

function ensureDir(home: string): void {
  mkdirSync(join(home, DIR), { recursive: true, mode: 0o700 });
}

const TOKEN_LINE = new RegExp(`^\\s*(?:export\\s+)?${TOKEN_ENV}\\s*=`);

/**
 * Put the token into the secrets file (replacing an earlier one, every other line kept), owner-only.
 * A token is one line of printable ASCII; anything else is refused rather than written.
 */
export function storeToken(home: string, token: string): void {
  if (!/^[\x21-\x7e]{8,4096}$/.test(token)) throw new Error("iLink returned a token parley cannot store");
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const path = secretsFile(home);
  const lines = existsSync(path) ? readFileSync(path, "utf8").split("\n") : [];
  const kept = lines.filter((l) => !TOKEN_LINE.test(l));
  while (kept.length > 0 && kept[kept.length - 1] === "") kept.pop();
  writeAtomic(path, `${[...kept, `${TOKEN_ENV}=${token}`].join("\n")}\n`);
}

/** Remove the token from the secrets file; true when one was there. */
export function removeToken(home: string): boolean {
  const path = secretsFile(home);
  if (!existsSync(path)) return false;
  const lines = readFileSync(path, "utf8").split("\n");
  const kept = lines.filter((l) => !TOKEN_LINE.test(l));
  if (kept.length === lines.length) return false;
  writeAtomic(path, kept.join("\n"));
  return true;
}

export function writeLink(home: string, link: LinkRecord): void {
  ensureDir(home);
  writeAtomic(linkFile(home), `${JSON.stringify(link)}\n`);
}

/** A relink starts a fresh session: an earlier pause no longer applies. */
export function clearHealth(home: string): void {
  rmSync(healthFile(home), { force: true });
}

export function removeLink(home: string): void {
  rmSync(linkFile(home), { force: true });
  rmSync(healthFile(home), { force: true });
}

/** The link record, or null (never linked, unlinked, unreadable). */
export function readLink(home: string): LinkRecord | null {
  try {
    const raw = JSON.parse(readFileSync(linkFile(home), "utf8")) as Partial<LinkRecord>;
    if (typeof raw.botId !== "string" || typeof raw.ownerUserId !== "string") return null;
    return {
      botId: raw.botId,
      ownerUserId: raw.ownerUserId,
      ...(typeof raw.baseUrl === "string" ? { baseUrl: raw.baseUrl } : {}),
      linkedAt: typeof raw.linkedAt === "number" ? raw.linkedAt : 0,
    };
  } catch {
    return null;
  }
}

export function writeHealth(home: string, health: WeixinHealth): void {
  ensureDir(home);
  writeAtomic(healthFile(home), `${JSON.stringify(health)}\n`);
}

export function readHealth(home: string): WeixinHealth | undefined {
  try {
    const raw = JSON.parse(readFileSync(healthFile(home), "utf8")) as Partial<WeixinHealth>;
    if (typeof raw.pausedUntil !== "number" || typeof raw.at !== "number") return undefined;
    return { pausedUntil: raw.pausedUntil, at: raw.at };
  } catch {
    return undefined;
  }
}

/** An id shown by its ends only (`abc…@im.bot`): enough to tell two apart. */
export function maskId(id: string): string {
  const at = id.indexOf("@");
  const local = at >= 0 ? id.slice(0, at) : id;
  const domain = at >= 0 ? id.slice(at) : "";
  const chars = Array.from(local);
  if (chars.length <= 4) return `${"•".repeat(chars.length)}${domain}`;
  return `${chars.slice(0, 3).join("")}…${chars.slice(-1).join("")}${domain}`;
}
