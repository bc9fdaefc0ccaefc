/**
 * Where WhatsApp keeps its state in the data home, and what can be read of it without baileys: the
 * linked account (for the probe and `parley doctor`) and the folder's permissions. The folder holds
 * the linked device's keys, which ARE the credential; its path is fixed (see auth-state.ts).
 */
import { existsSync, lstatSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

export const WHATSAPP_DIR = "whatsapp";
export const CREDS_FILE = "creds.json";
/** The ids of every message parley sent (echo.ts), kept beside the keys. */
export const SENT_IDS_FILE = "sent-ids.log";

export function whatsappDir(home: string): string {
  return join(home, WHATSAPP_DIR);
}

export interface LinkedAccount {
  /** The phone JID (with its device suffix), e.g. `4917012345678:12@s.whatsapp.net`. */
  id: string;
  lid?: string;
  name?: string;
}

type StoredCreds = { me?: Partial<LinkedAccount>; account?: unknown };

function readCreds(home: string): StoredCreds | null {
  const path = join(whatsappDir(home), CREDS_FILE);
  if (!existsSync(path)) return null;
  try {
    return JSON.parse(readFileSync(path, "utf8")) as StoredCreds;
  } catch {
    // A damaged creds file links nothing; doctor says "not linked".
    return null;
  }
}

/**
 * A pairing that never finished: baileys writes `me` into the creds the moment a pairing code is
 * asked for (lib/Socket/socket.js `requestPairingCode`), but the signed device identity (`account`)
 * only when the phone completed the pairing (lib/Utils/validate-connection.js
 * `configureSuccessfulPairing`). Such creds link nothing, and a socket made with them would try to
 * log in (validateConnection: `creds.me` set) instead of showing a new code.
 */
export function hasUnfinishedPairing(home: string): boolean {
  const creds = readCreds(home);
  return typeof creds?.me?.id === "string" && !isAccount(creds.account);
}

const isAccount = (v: unknown) => typeof v === "object" && v !== null;

/** The account these keys are linked to, or null (never linked, a pairing never finished, unreadable). */
export function readLinkedAccount(home: string): LinkedAccount | null {
  const creds = readCreds(home);
  const me = creds?.me;
  if (typeof me?.id !== "string" || me.id === "" || !isAccount(creds?.account)) return null;
  return {
    id: me.id,
    ...(typeof me.lid === "string" ? { lid: me.lid } : {}),
    ...(typeof me.name === "string" ? { name: me.name } : {}),
  };
}

/** The phone number of a JID, masked for logs and doctor: `+49••••••5678`. */
export function maskedNumber(jid: string): string {
  const digits = (jid.split("@")[0] ?? "").split(":")[0] ?? "";
  if (digits.length <= 4) return "+••••";
  return `+${digits.slice(0, 2)}${"•".repeat(Math.max(0, digits.length - 6))}${digits.slice(-4)}`;
}

export interface LoosePermission {
  path: string;
  mode: number;
}

/** The folder and every file in it that anyone but the owner may read or write. */
export function loosePermissions(home: string): LoosePermission[] {
  const dir = whatsappDir(home);
  if (!existsSync(dir)) return [];
  const out: LoosePermission[] = [];
  const check = (path: string) => {
    const st = lstatSync(path);
    if (st.isSymbolicLink()) return;
    const mode = st.mode & 0o777;
    if (mode & 0o077) out.push({ path, mode });
  };
  check(dir);
  for (const name of readdirSync(dir)) check(join(dir, name));
  return out;
}
