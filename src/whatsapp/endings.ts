/**
 * The closes that end the connection for good, what each one means, and the one the data home
 * remembers so `parley doctor` can say it after the process is gone. baileys closes a socket with a
 * Boom error whose status code (and, for a stream error, its reason node) says why:
 * - 401 with a `<conflict type="device_removed"/>` stream error: the device was removed on the
 *   phone; its keys are dead and are deleted (lib/Socket/socket.js `CB:stream:error`;
 *   WhatsApp's stanza as quoted in WhatsApp's own terms in adiwajshing/Baileys issue #1336);
 * - any other 401 (a `failure` node, lib/Socket/socket.js `CB:failure`, or baileys' own `logout`):
 *   logged out; the keys are kept (the operator links again, which replaces them);
 * - 440, a `conflict` stream error (lib/Utils/generics.js `getErrorCodeFromStreamError`, CODE_MAP):
 *   another client took the session; retrying would fight it, the keys stay valid;
 * - 403, the server's failure reason passed through (`CB:failure`): banned or restricted;
 * - 405, the same path: WhatsApp refused the client version as outdated (WhiskeySockets/Baileys
 *   issue #852 and its many twins: "405" until the version is current).
 * Every other code is a dropped connection and is retried with backoff.
 */
import { existsSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { whatsappDir } from "./home.js";

export type Ending = "removed" | "logged_out" | "replaced" | "restricted" | "outdated";

export const ENDED_FILE = "connection-ended.json";

/** What a close said: its status code and, for a conflict stream error, the conflict's type. */
export interface CloseReason {
  code: number | undefined;
  conflict: string | undefined;
}

type Node = { tag?: unknown; attrs?: Record<string, unknown>; content?: unknown };

/** The reason of a baileys close error (a Boom: `output.statusCode`, `data` the stanza or its reason node). */
export function closeReasonOf(error: unknown): CloseReason {
  const boom = error as { output?: { statusCode?: unknown }; data?: unknown } | undefined;
  const code = typeof boom?.output?.statusCode === "number" ? boom.output.statusCode : undefined;
  return { code, conflict: conflictOf(boom?.data) };
}

function conflictOf(data: unknown): string | undefined {
  const node = data as Node | undefined;
  if (!node || typeof node !== "object") return undefined;
  // baileys 7 passes the reason node itself; older versions the whole stream:error node.
  const reason =
    node.tag === "conflict"
      ? node
      : Array.isArray(node.content)
        ? (node.content as Node[]).find((c) => c?.tag === "conflict")
        : undefined;
  const type = reason?.attrs?.type;
  return typeof type === "string" ? type : reason ? "" : undefined;
}

/** The ending a close means, or null: a dropped connection, retried. */
export function endingOf(reason: CloseReason): Ending | null {
  switch (reason.code) {
    case 401:
      return reason.conflict === "device_removed" ? "removed" : "logged_out";
    case 440:
      return "replaced";
    case 403:
      return "restricted";
    case 405:
      return "outdated";
    default:
      return null;
  }
}

/** The keys are deleted only when the device itself is gone. */
export function forgetsKeys(ending: Ending): boolean {
  return ending === "removed";
}

/** One sentence the operator reads, in the log, in doctor, in `link` and on another channel. */
export function endingText(ending: Ending, version?: string): string {
  switch (ending) {
    case "removed":
      return "this device was removed from the account on the phone (Linked devices); its keys are deleted. Run `parley whatsapp link` to link again.";
    case "logged_out":
      return "WhatsApp logged this device out (401). Run `parley whatsapp link` to link again.";
    case "replaced":
      return "another client took over this device's connection (440); parley stopped rather than fight it. Stop the other client, then restart parley.";
    case "restricted":
      return "WhatsApp refused this account (403: typically a ban or a restriction). Check WhatsApp on the phone; the keys are kept.";
    case "outdated":
      return `WhatsApp refused the client version${version ? ` ${version}` : ""} as outdated (405). parley asks WhatsApp Web for its current version at start; set \`whatsapp.webVersion\` to a current one if that fails, or update parley.`;
  }
}

export interface EndedRecord {
  ending: Ending;
  code: number | null;
  /** ISO time of the close. */
  at: string;
  /** The WhatsApp Web version the refused socket announced (for a 405). */
  version?: string;
}

const ENDINGS: readonly Ending[] = ["removed", "logged_out", "replaced", "restricted", "outdated"];

/** The ending the data home remembers (written at the close, gone once a connection opens), or null. */
export function readEnded(home: string): EndedRecord | null {
  const path = join(whatsappDir(home), ENDED_FILE);
  if (!existsSync(path)) return null;
  try {
    const raw = JSON.parse(readFileSync(path, "utf8")) as Partial<EndedRecord>;
    if (!raw.ending || !ENDINGS.includes(raw.ending) || typeof raw.at !== "string") return null;
    return {
      ending: raw.ending,
      code: typeof raw.code === "number" ? raw.code : null,
      at: raw.at,
      ...(typeof raw.version === "string" ? { version: raw.version } : {}),
    };
  } catch {
    // A damaged record says nothing; the next terminal close writes a new one.
    return null;
  }
}

/** Written whole and renamed (owner-only), like the keys beside it. */
export function writeEnded(home: string, record: EndedRecord): void {
  const path = join(whatsappDir(home), ENDED_FILE);
  const tmp = `${path}.tmp`;
  writeFileSync(tmp, JSON.stringify(record), { mode: 0o600 });
  renameSync(tmp, path);
}

export function clearEnded(home: string): void {
  rmSync(join(whatsappDir(home), ENDED_FILE), { force: true });
}
