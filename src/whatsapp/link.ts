/**
 * `parley whatsapp link` and `unlink`. Linking makes this parley a linked device of the operator's
 * account: WhatsApp shows a QR code to scan (Settings → Linked devices → Link a device), or, with
 * `--phone`, a pairing code to type on the phone instead. The keys land in the data home
 * (auth-state.ts); nothing else is written. A pairing code lives as long as the socket that asked
 * for it: when WhatsApp closes that socket (408, its QR references ran out) the code is dead, so a
 * new one is asked on the next socket and only a code whose socket is still live is printed. A link
 * interrupted after a code was asked (baileys writes `me` into the creds at once) is started over.
 * A final ending (a 405: the version is outdated; a 403: the account is restricted) ends the link
 * and says which. Unlinking logs the device out, so the phone's list drops it, and deletes the
 * keys (also when WhatsApp cannot be reached: the keys are the credential).
 */
import { spawnSync } from "node:child_process";
import { realClock } from "../messaging/base/clock.js";
import type { Logger } from "../messaging/base/logger.js";
import type { ChannelCliContext } from "../messaging/channel/contract.js";
import { openAuthState } from "./auth-state.js";
import type { FatalEnding, SocketFactory } from "./client.js";
import { baileysSocketFactory, defaultSocketOptions, WaConnection } from "./client.js";
import type { EndedRecord } from "./endings.js";
import { endingText, readEnded, writeEnded } from "./endings.js";
import { hasUnfinishedPairing, maskedNumber, readLinkedAccount, whatsappDir } from "./home.js";
import type { WhatsAppSettings } from "./index.js";
import { proxyFor } from "./proxy.js";
import type { VersionSource } from "./version.js";
import { baileysVersionSource, resolveVersion } from "./version.js";

export interface LinkOptions {
  createSocket?: SocketFactory;
  /** Give up after this long without a scan (default 3 minutes). */
  timeoutMs?: number;
  /** Draws a QR code in the terminal; null when no renderer is available (the payload is printed). */
  renderQr?: (data: string) => string | null;
  /** Where the current WhatsApp Web version is asked (default: baileys' fetch of web.whatsapp.com). */
  fetchVersion?: VersionSource;
  /** Backoff between sockets while linking (tests shorten it). */
  backoffMs?: number;
}

/** A 408 closed the socket: WhatsApp stopped offering this socket's QR references (and its code). */
const QR_REFS_ENDED = 408;

const E164 = /^\+[1-9][0-9]{6,14}$/;

/** `qrencode`, when the system has it: parley ships no QR encoder of its own. */
export function systemQr(data: string): string | null {
  const run = spawnSync("qrencode", ["-t", "UTF8", "-o", "-", data], { encoding: "utf8", timeout: 5000 });
  return run.status === 0 && run.stdout ? run.stdout : null;
}

function cliLogger(ctx: Pick<ChannelCliContext<unknown>, "err">): Logger {
  return {
    debug: () => {},
    info: () => {},
    warn: (message) => ctx.err(message),
    error: (message) => ctx.err(message),
  };
}

export async function linkCommand(
  ctx: ChannelCliContext<WhatsAppSettings>,
  o: LinkOptions = {},
): Promise<number> {
  const phoneAt = ctx.args.indexOf("--phone");
  const phone = phoneAt >= 0 ? (ctx.args[phoneAt + 1] ?? "") : undefined;
  const stray = ctx.args.filter((a, i) => a !== "--phone" && (phoneAt < 0 || i !== phoneAt + 1));
  if ((phone !== undefined && !E164.test(phone)) || stray.length > 0) {
    ctx.err("usage: parley whatsapp link [--phone +4917012345678]");
    return 2;
  }
  const linked = readLinkedAccount(ctx.home);
  const ended = readEnded(ctx.home);
  let auth = await openAuthState(ctx.home);
  if (linked && ended?.ending === "logged_out") {
    // WhatsApp no longer knows these keys: linking again replaces them.
    ctx.out(`WhatsApp logged ${maskedNumber(linked.id)} out; linking anew.`);
    await auth.clear();
    auth = await openAuthState(ctx.home);
  } else if (linked) {
    ctx.out(
      `Already linked as ${maskedNumber(linked.id)}. Run \`parley whatsapp unlink\` first to link another account.`,
    );
    return 0;
  } else if (hasUnfinishedPairing(ctx.home)) {
    ctx.out("An earlier `parley whatsapp link` did not finish; starting over.");
    await auth.clear();
    auth = await openAuthState(ctx.home);
  }
  const logger = cliLogger(ctx);
  const version = await resolveVersion(
    ctx.settings.webVersion,
    o.fetchVersion ?? baileysVersionSource(proxyFor(ctx.settings.proxyUrl)?.dispatcher),
    logger,
  );
  const render = o.renderQr ?? systemQr;
  /** The socket a pairing code was asked on (its code dies with it). */
  let askedOn: unknown = null;
  let fatal: { ending: FatalEnding; record: EndedRecord } | null = null;
  const outcome = new Promise<"linked" | "failed">((settle) => {
    let timer: unknown = null;
    const resolve = (result: "linked" | "failed") => {
      if (timer !== null) realClock.clearTimeout(timer);
      settle(result);
    };
    const connection: WaConnection = new WaConnection({
      createSocket: o.createSocket ?? baileysSocketFactory(ctx.settings, logger),
      auth,
      clock: realClock,
      logger,
      home: ctx.home,
      socketOptions: { ...defaultSocketOptions(), version: version.version },
      ...(o.backoffMs !== undefined ? { backoff: { initialMs: o.backoffMs, maxMs: o.backoffMs } } : {}),
      onClose: (reason) => {
        if (phone === undefined || askedOn === null || reason.code !== QR_REFS_ENDED) return;
        // The code died with its socket; the next socket must register afresh (no `me`) for a new one.
        askedOn = null;
        auth.state.creds.me = undefined;
        auth.state.creds.pairingCode = undefined;
        void auth.saveCreds();
        ctx.out("That pairing code expired unused; asking WhatsApp for a new one…");
      },
      onQr: (qr) => {
        if (phone !== undefined) {
          // The pairing code is asked once the socket is talking to WhatsApp (its first QR).
          const sock = connection.connecting();
          if (!sock || askedOn === sock) return;
          askedOn = sock;
          void sock
            .requestPairingCode(phone.slice(1))
            .then((code) => {
              // Never a dead code: one whose socket closed meanwhile is not shown.
              if (connection.connecting() !== sock) return;
              ctx.out(
                `Pairing code: ${code}\nOn your phone: WhatsApp → Settings → Linked devices → Link a device → Link with phone number instead.`,
              );
            })
            .catch((error: unknown) => ctx.err(`parley: could not get a pairing code: ${String(error)}`));
          return;
        }
        const drawn = render(qr);
        ctx.out(
          drawn
            ? `Scan this with WhatsApp → Settings → Linked devices → Link a device:\n${drawn}`
            : `Scan this QR code with WhatsApp → Settings → Linked devices → Link a device. parley draws it with \`qrencode\` when installed; otherwise render this text as a QR code (e.g. \`qrencode -t ansiutf8 '…'\`):\n${qr}`,
        );
      },
      onOpen: () => {
        void (async () => {
          await auth.saveCreds();
          await connection.stop();
          resolve("linked");
        })();
      },
      onFatal: (ending, record) => {
        fatal = { ending, record };
        void connection.stop().then(() => resolve("failed"));
      },
    });
    connection.start();
    timer = realClock.setTimeout(
      () => void connection.stop().then(() => resolve("failed")),
      o.timeoutMs ?? 180_000,
    );
    void ctx.stopSignal().then(() => connection.stop().then(() => resolve("failed")));
  });
  const result = await outcome;
  const account = readLinkedAccount(ctx.home);
  if (result === "linked" && account) {
    ctx.out(
      `✓ Linked as ${maskedNumber(account.id)}. The keys are in ${whatsappDir(ctx.home)} (owner-only). Start parley.`,
    );
    return 0;
  }
  await auth.clear();
  const ending = fatal as { ending: FatalEnding; record: EndedRecord } | null;
  if (ending) {
    // The keys of a link that never finished go; what WhatsApp said stays for doctor.
    writeEnded(ctx.home, ending.record);
    ctx.err(`parley: not linked: ${endingText(ending.ending, ending.record.version)}`);
    return 1;
  }
  ctx.err("parley: not linked (no scan in time); run `parley whatsapp link` again.");
  return 1;
}

export async function unlinkCommand(
  ctx: ChannelCliContext<WhatsAppSettings>,
  o: Pick<LinkOptions, "createSocket" | "timeoutMs" | "fetchVersion"> = {},
): Promise<number> {
  const linked = readLinkedAccount(ctx.home);
  if (!linked) {
    ctx.out("No WhatsApp account is linked here.");
    return 0;
  }
  const auth = await openAuthState(ctx.home);
  const version = await resolveVersion(
    ctx.settings.webVersion,
    o.fetchVersion ?? baileysVersionSource(proxyFor(ctx.settings.proxyUrl)?.dispatcher),
    cliLogger(ctx),
  );
  const connection = new WaConnection({
    createSocket: o.createSocket ?? baileysSocketFactory(ctx.settings, cliLogger(ctx)),
    auth,
    clock: realClock,
    logger: cliLogger(ctx),
    socketOptions: { ...defaultSocketOptions(), version: version.version },
  });
  connection.start();
  let loggedOut = false;
  try {
    const sock = await connection.whenOpen(o.timeoutMs ?? 30_000);
    await sock.logout("parley whatsapp unlink");
    loggedOut = true;
  } catch (error) {
    ctx.err(`parley: could not reach WhatsApp to log out (${String(error)})`);
  } finally {
    await connection.stop();
  }
  // The keys go either way: they are the credential, and unlinking means nobody should hold them.
  await auth.clear();
  ctx.out(
    loggedOut
      ? `✓ Unlinked ${maskedNumber(linked.id)} and deleted its keys.`
      : `Deleted the keys of ${maskedNumber(linked.id)}. Also remove this device on your phone: WhatsApp → Settings → Linked devices.`,
  );
  return 0;
}
