/**
 * The storage port's typed errors. Each names the file (or database) and what the operator should
 * do, because the gateway refuses to start on them rather than guess. Layer: messaging.
 */
import { ParleyError } from "../base/errors.js";

/**
 * The store cannot be trusted as it is: not a database, damaged pages, or an older install's file
 * that does not decode. Nothing was reset or rewritten: resetting would silently drop every
 * session, resume record and unanswered message, and the next write would make that permanent.
 */
export class StoreCorruptError extends ParleyError {
  constructor(
    /** The file (or database) at fault. */
    readonly location: string,
    /** What is wrong, without file content (the message may reach a log line or a chat). */
    readonly problem: string,
    /** What to do about it. */
    readonly repair: string,
    options?: { cause?: unknown },
  ) {
    super("STORE_CORRUPT", `Store ${location} ${problem}. Nothing was reset. ${repair}`, options);
    this.name = "StoreCorruptError";
  }
}

/** The database was migrated by a newer parley: an older build must not write to a schema it does not know. */
export class StoreTooNewError extends ParleyError {
  constructor(
    readonly location: string,
    readonly unknownMigrations: readonly string[],
  ) {
    super(
      "STORE_TOO_NEW",
      `Store ${location} was upgraded by a newer parley (migrations ${unknownMigrations.join(", ")} ` +
        "are unknown to this version). Run the newer parley, or restore a backup taken before the upgrade.",
    );
    this.name = "StoreTooNewError";
  }
}
