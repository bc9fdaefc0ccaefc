/**
 * The key locators are signed with: 32 random bytes in `$PARLEY_HOME/locator.key`, created on first
 * use, owner-only. Kept in the data home (not per process) so a locator a host holds survives a
 * restart of the channel server; never leaves this machine. A key file another account could read
 * is tightened (and said), a damaged one is refused rather than silently replaced (that would make
 * every locator in flight look forged).
 */
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { ParleyError } from "../messaging/base/errors.js";
import type { Logger } from "../messaging/base/logger.js";

export const LOCATOR_KEY_FILE = "locator.key";
const KEY_BYTES = 32;

export function loadLocatorKey(home: string, logger: Logger): Buffer {
  const path = join(home, LOCATOR_KEY_FILE);
  if (!existsSync(path)) {
    const key = randomBytes(KEY_BYTES);
    // wx: two starts racing never overwrite each other's key.
    writeFileSync(path, key.toString("base64"), { mode: 0o600, flag: "wx" });
    return key;
  }
  const mode = statSync(path).mode & 0o777;
  if (mode & 0o077) {
    chmodSync(path, 0o600);
    logger.warn(`tightened ${path} to owner-only: another account could have read the locator key`);
  }
  const key = Buffer.from(readFileSync(path, "utf8").trim(), "base64");
  if (key.length !== KEY_BYTES)
    throw new ParleyError(
      "CONFIG_INVALID",
      `${path} is not a locator key (${KEY_BYTES} bytes, base64). Move it aside to have a new one made; locators issued with the old one will then be refused.`,
    );
  return key;
}
