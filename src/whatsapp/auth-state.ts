/**
 * The linked device's keys: `$PARLEY_HOME/whatsapp/`, owner-only (0700 folder, 0600 files), the
 * path fixed. Those keys ARE the credential (whoever reads them acts as the operator on WhatsApp,
 * no second factor), so the location is not configurable: a configurable path would carry the
 * credential out from behind the data home's permissions. One file per creds and per signal key,
 * every key type baileys stores included (sessions, pre-keys, `lid-mapping`, `device-list`,
 * `tctoken`, …), each written whole to a temporary file and renamed over the old one, so a crash
 * mid-write leaves the previous key, never half of one.
 *
 * baileys ships `useMultiFileAuthState`, but it writes with the process umask (group- and
 * world-readable on most systems) and in place; the spec asks for owner-only and a crash-safe
 * write, so the same layout is kept and the writes are our own.
 */
import { randomBytes } from "node:crypto";
import { chmod, mkdir, readdir, readFile, rename, rm, stat, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type {
  AuthenticationCreds,
  AuthenticationState,
  SignalDataSet,
  SignalDataTypeMap,
} from "@whiskeysockets/baileys";
import { BufferJSON, initAuthCreds, proto } from "@whiskeysockets/baileys";
import { CREDS_FILE, whatsappDir } from "./home.js";

export interface FileAuthState {
  state: AuthenticationState;
  /** Persist the creds (baileys' `creds.update`). */
  saveCreds(): Promise<void>;
  /** Forget the link: every key and the creds (after a logout, or `parley whatsapp unlink`). */
  clear(): Promise<void>;
}

/** Ids are JIDs and numbers; anything outside this set is escaped so no id can name another path. */
const SAFE_ID = /[^A-Za-z0-9@_-]/g;

export function keyFileName(type: string, id: string): string {
  const safe = (s: string) =>
    s.replace(SAFE_ID, (c) => `%${c.codePointAt(0)?.toString(16).padStart(2, "0") ?? "00"}`);
  return `${safe(type)}-${safe(id)}.json`;
}

/** Owner-only folder, created or tightened. */
async function ownerOnlyDir(dir: string): Promise<void> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const st = await stat(dir);
  if (!st.isDirectory()) throw new Error(`${dir} is not a folder`);
  if ((st.mode & 0o777) !== 0o700) await chmod(dir, 0o700);
}

export async function openAuthState(home: string): Promise<FileAuthState> {
  const dir = whatsappDir(home);
  await ownerOnlyDir(dir);
  // Writes to one file are serialized: two updates of the same key must not race their renames.
  const chains = new Map<string, Promise<void>>();
  const serialized = (file: string, op: () => Promise<void>): Promise<void> => {
    const next = (chains.get(file) ?? Promise.resolve()).then(op, op);
    chains.set(file, next);
    void next.finally(() => {
      if (chains.get(file) === next) chains.delete(file);
    });
    return next;
  };
  const write = (file: string, value: unknown) =>
    serialized(file, async () => {
      const tmp = join(dir, `.${file}.${randomBytes(6).toString("hex")}.tmp`);
      await writeFile(tmp, JSON.stringify(value, BufferJSON.replacer), { mode: 0o600, flag: "wx" });
      await rename(tmp, join(dir, file));
    });
  const remove = (file: string) => serialized(file, () => rm(join(dir, file), { force: true }));
  const read = async (file: string): Promise<unknown> => {
    try {
      return JSON.parse(await readFile(join(dir, file), "utf8"), BufferJSON.reviver);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw error;
    }
  };
  const creds = ((await read(CREDS_FILE)) as AuthenticationCreds | null) ?? initAuthCreds();
  return {
    state: {
      creds,
      keys: {
        get: async <T extends keyof SignalDataTypeMap>(type: T, ids: string[]) => {
          const out: { [id: string]: SignalDataTypeMap[T] } = {};
          await Promise.all(
            ids.map(async (id) => {
              let value = await read(keyFileName(type, id));
              // Stored as JSON; baileys expects the protobuf object for this one type.
              if (type === "app-state-sync-key" && value)
                value = proto.Message.AppStateSyncKeyData.fromObject(value as Record<string, unknown>);
              if (value !== null) out[id] = value as SignalDataTypeMap[T];
            }),
          );
          return out;
        },
        set: async (data: SignalDataSet) => {
          const tasks: Promise<void>[] = [];
          for (const [type, entries] of Object.entries(data))
            for (const [id, value] of Object.entries(entries ?? {}))
              tasks.push(value ? write(keyFileName(type, id), value) : remove(keyFileName(type, id)));
          await Promise.all(tasks);
        },
      },
    },
    saveCreds: () => write(CREDS_FILE, creds),
    clear: async () => {
      await Promise.all([...chains.values()]);
      for (const name of await readdir(dir)) await rm(join(dir, name), { force: true, recursive: true });
    },
  };
}
