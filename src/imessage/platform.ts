/**
 * Where iMessage can run: on the Mac signed in to Messages, macOS 14 or later, with the Messages
 * database readable by this process (Full Disk Access). Anywhere else the channel refuses to start
 * and says why: a gateway elsewhere driving imsg through a remote stdio wrapper reads chats but
 * every send fails on the Automation grant (-1743), which macOS records against the remote shell.
 * The probe is a parameter so tests run on Linux; the gateway always uses the host's.
 */
import { constants } from "node:fs";
import { access } from "node:fs/promises";
import { homedir, release } from "node:os";
import { join } from "node:path";

export interface PlatformReport {
  supported: boolean;
  /** "macOS 14" (from the Darwin release), or the platform's name. */
  os: string;
  dbPath: string;
  dbReadable: boolean;
  /** Why not, for the operator (absent when supported). */
  reason?: string;
}

export type PlatformProbe = (dbPath: string | undefined) => Promise<PlatformReport>;

/** The oldest macOS imsg supports. */
export const MIN_MACOS = 14;
/** Darwin's major version is macOS's plus 9 from macOS 11 (Darwin 20) on. */
const DARWIN_OFFSET = 9;

export const defaultDbPath = () => join(homedir(), "Library", "Messages", "chat.db");

export const hostPlatform: PlatformProbe = async (dbPath) => {
  const path = dbPath ?? defaultDbPath();
  if (process.platform !== "darwin")
    return {
      supported: false,
      os: process.platform,
      dbPath: path,
      dbReadable: false,
      reason: `iMessage runs only on the Mac signed in to Messages (macOS ${MIN_MACOS}+); this host is ${process.platform}`,
    };
  const macos = Number.parseInt(release().split(".")[0] ?? "0", 10) - DARWIN_OFFSET;
  const os = `macOS ${macos}`;
  if (macos < MIN_MACOS)
    return {
      supported: false,
      os,
      dbPath: path,
      dbReadable: false,
      reason: `${os} is too old (imsg needs macOS ${MIN_MACOS}+)`,
    };
  const dbReadable = await access(path, constants.R_OK).then(
    () => true,
    () => false,
  );
  if (!dbReadable)
    return {
      supported: false,
      os,
      dbPath: path,
      dbReadable,
      reason: `the Messages database (${path}) is not readable: grant Full Disk Access to the process running parley`,
    };
  return { supported: true, os, dbPath: path, dbReadable };
};
