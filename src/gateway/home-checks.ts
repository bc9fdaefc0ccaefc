/**
 * What `parley doctor` can tell about the data home without starting anything: whether a gateway
 * holds it, and whether an older install's JSON files, which the next start imports into the store
 * (sessions.json, each channel's resume record), can be read: an unreadable sessions.json refuses
 * the start. Synchronous reads only; nothing is written or repaired. (The store itself: store-report.ts.)
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { decodeStore, SESSION_STORE_FILE } from "../messaging/session/legacy-session-file.js";
import {
  decodeExpectations,
  expectationsRepairHint,
  RESUME_TRUST_DIR,
} from "../messaging/session/resume-expectations.js";
import { HOME_LOCK_FILE } from "./home-lock.js";

export interface HomeChecks {
  lines: string[];
  healthy: boolean;
}

const RESUME_FILE = /^([a-z0-9][a-z0-9_-]{0,31})_resume_expectations\.json$/;

function errorCode(error: unknown): string {
  // No parser detail: V8 quotes a snippet of the file, and the file holds conversation titles.
  if (error instanceof SyntaxError) return "is not valid JSON";
  return (error as NodeJS.ErrnoException).code ?? (error instanceof Error ? error.message : String(error));
}

export function checkHome(home: string, isAlive: (pid: number) => boolean): HomeChecks {
  const lines: string[] = [];
  let healthy = true;
  const lockPath = join(home, HOME_LOCK_FILE);
  if (existsSync(lockPath)) {
    const pid = Number.parseInt(readFileSync(lockPath, "utf8").trim(), 10);
    if (Number.isSafeInteger(pid) && pid > 0 && isAlive(pid))
      lines.push(`running: a parley (pid ${pid}) is using this data home; a second start here would refuse`);
    else lines.push(`stale lock: ${lockPath} names no running parley; the next start takes it over`);
  }
  const storePath = join(home, SESSION_STORE_FILE);
  if (existsSync(storePath)) {
    try {
      const rows = decodeStore(readFileSync(storePath, "utf8"));
      lines.push(`✓ sessions.json (older install): ${rows.length} session(s), imported at the next start`);
    } catch (error) {
      healthy = false;
      lines.push(
        `✗ sessions.json (older install): ${storePath}: ${errorCode(error)}; start refuses until it is ` +
          "repaired or moved aside",
      );
    }
  }
  const trust = join(home, RESUME_TRUST_DIR);
  const names = existsSync(trust)
    ? readdirSync(trust)
        .filter((n) => RESUME_FILE.test(n))
        .sort()
    : [];
  for (const name of names) {
    const channel = RESUME_FILE.exec(name)?.[1] ?? name;
    const rel = `${RESUME_TRUST_DIR}/${name}`;
    try {
      const rows = decodeExpectations(readFileSync(join(trust, name)));
      const active = [...rows.values()].filter((r) => !r.retired).length;
      lines.push(
        `✓ ${channel} resume file (older install): ${active} attached conversation(s), imported at the next start`,
      );
    } catch (error) {
      healthy = false;
      lines.push(
        `✗ ${channel} resume file (older install): ${rel} ${errorCode(error)}; every ${channel} message is refused. ` +
          expectationsRepairHint(rel),
      );
    }
  }
  return { lines, healthy };
}
