/**
 * Which parts of a Telegram message are files (photo = its largest size, document, audio, voice,
 * video, video note, animation once; stickers are not), the names they get, a media-only message
 * still being a message, the 20 MiB clamp on the shared caps, and the album collector's timing on
 * an injected clock (settle time re-armed per item, a total bound, ten items flush at once,
 * anything else from the conversation flushes first).
 */
import { describe, expect, it } from "vitest";
import { silentLogger } from "../../src/messaging/base/logger.js";
import { DEFAULT_INGEST_LIMITS } from "../../src/messaging/files/ingest.js";
import { MemoryAuditSink } from "../../src/messaging/security/audit.js";
import { AlbumCollector } from "../../src/telegram/albums.js";
import { distinctNames, inboundFilesOf, TELEGRAM_INGEST_LIMITS } from "../../src/telegram/attachments.js";
import { TELEGRAM_CAPABILITIES, TelegramTransport } from "../../src/telegram/transport.js";
import type { TgMessage } from "../../src/telegram/wire.js";
import { testDrops } from "../helpers/drops.js";
import { ManualClock, settle } from "./helpers.js";

const chat = { id: 42, type: "private" as const };
const msg = (fields: Partial<TgMessage>): TgMessage => ({
  message_id: 7,
  chat,
  from: { id: 42, is_bot: false },
  ...fields,
});
const f = (id: string, size?: number) => ({
  file_id: id,
  file_unique_id: `u-${id}`,
  ...(size ? { file_size: size } : {}),
});

describe("inboundFilesOf", () => {
  it("a photo is its largest size, named photo.jpg", () => {
    const photo = [
      { ...f("small", 900), width: 90, height: 60 },
      { ...f("large", 90_000), width: 1280, height: 853 },
      { ...f("medium", 9_000), width: 320, height: 213 },
    ];
    expect(inboundFilesOf(msg({ photo }))).toEqual([
      { name: "photo.jpg", ref: "large", mimeType: "image/jpeg", size: 90_000 },
    ]);
  });

  it("a document keeps its file_name and type; unnamed files are named by kind", () => {
    expect(
      inboundFilesOf(msg({ document: { ...f("d", 12), file_name: "plan.md", mime_type: "text/markdown" } })),
    ).toEqual([{ name: "plan.md", ref: "d", mimeType: "text/markdown", size: 12 }]);
    expect(inboundFilesOf(msg({ document: { ...f("d"), mime_type: "application/pdf" } }))).toEqual([
      { name: "document.pdf", ref: "d", mimeType: "application/pdf" },
    ]);
    expect(inboundFilesOf(msg({ document: f("d") }))).toEqual([{ name: "document", ref: "d" }]);
    expect(inboundFilesOf(msg({ audio: { ...f("a"), mime_type: "audio/mpeg" } }))).toEqual([
      { name: "audio.mp3", ref: "a", mimeType: "audio/mpeg" },
    ]);
    expect(
      inboundFilesOf(msg({ audio: { ...f("a"), file_name: "song.flac", mime_type: "audio/flac" } }))[0]?.name,
    ).toBe("song.flac");
    expect(inboundFilesOf(msg({ video: { ...f("v"), mime_type: "video/mp4" } }))[0]?.name).toBe("video.mp4");
  });

  it("a voice note is voice.ogg; a video note is video-note.mp4", () => {
    expect(inboundFilesOf(msg({ voice: { ...f("vo", 3000), mime_type: "audio/ogg" } }))).toEqual([
      { name: "voice.ogg", ref: "vo", mimeType: "audio/ogg", size: 3000 },
    ]);
    expect(inboundFilesOf(msg({ voice: f("vo") }))).toEqual([
      { name: "voice.ogg", ref: "vo", mimeType: "audio/ogg" },
    ]);
    expect(inboundFilesOf(msg({ video_note: f("vn") }))).toEqual([
      { name: "video-note.mp4", ref: "vn", mimeType: "video/mp4" },
    ]);
  });

  it("an animation is one file, although Telegram repeats it as a document", () => {
    const same = { ...f("gif"), file_name: "dance.mp4", mime_type: "video/mp4" };
    expect(inboundFilesOf(msg({ animation: same, document: same }))).toEqual([
      { name: "dance.mp4", ref: "gif", mimeType: "video/mp4" },
    ]);
  });

  it("a sticker is not a file, and a text message has none", () => {
    expect(inboundFilesOf(msg({ sticker: { ...f("s"), is_animated: true, emoji: "👍" } }))).toEqual([]);
    expect(inboundFilesOf(msg({ text: "hi" }))).toEqual([]);
  });

  it("names are made distinct across one turn", () => {
    const a = { name: "photo.jpg", ref: "1" };
    const names = distinctNames([
      a,
      { ...a, ref: "2" },
      { name: "notes", ref: "3" },
      { name: "notes", ref: "4" },
      { ...a, ref: "5" },
    ]);
    expect(names.map((n) => n.name)).toEqual(["photo.jpg", "photo-2.jpg", "notes", "notes-2", "photo-3.jpg"]);
    expect(names.map((n) => n.ref)).toEqual(["1", "2", "3", "4", "5"]);
  });
});

describe("the transport", () => {
  it("declares filesInbound, and a media-only message (caption or none) is a message", async () => {
    expect(TELEGRAM_CAPABILITIES.filesInbound).toBe(true);
    const t = new TelegramTransport({
      drops: testDrops(new MemoryAuditSink(), "telegram"),
      audit: new MemoryAuditSink(),
      allowedUserIds: new Set(["42"]),
    });
    const voice = await t.receive({ update_id: 1, message: msg({ voice: f("vo") }) });
    const captioned = await t.receive({
      update_id: 2,
      message: msg({ document: { ...f("d"), file_name: "a.txt" }, caption: "read this" }),
    });
    const sticker = await t.receive({ update_id: 3, message: msg({ sticker: f("s") }) });
    expect([voice.status, captioned.status, sticker.status]).toEqual(["dispatched", "dispatched", "dropped"]);
    const seen = [voice, captioned].map((o) =>
      o.status === "dispatched" ? { text: o.message.text, attachments: o.message.attachments } : null,
    );
    expect(seen).toEqual([
      { text: "", attachments: [{ name: "voice.ogg", ref: "vo", mimeType: "audio/ogg" }] },
      { text: "read this", attachments: [{ name: "a.txt", ref: "d" }] },
    ]);
  });

  it("clamps every shared cap to the Bot API's 20 MiB download limit", () => {
    const limits = { ...DEFAULT_INGEST_LIMITS, ...TELEGRAM_INGEST_LIMITS };
    expect(
      Math.max(limits.maxImageBytes, limits.maxAudioBytes, limits.maxVideoBytes, limits.maxDocumentBytes),
    ).toBe(20 * 1024 * 1024);
    expect(limits.maxTextBytes).toBe(DEFAULT_INGEST_LIMITS.maxTextBytes);
  });
});

describe("AlbumCollector", () => {
  function collector(clock: ManualClock) {
    const flushed: string[][] = [];
    const ends: (() => void)[] = [];
    const albums = new AlbumCollector<string>({
      timers: clock,
      logger: silentLogger,
      settleMs: 1_000,
      maxWaitMs: 5_000,
      flush: async (items) => {
        flushed.push(items);
        return { turn: new Promise<void>((resolve) => ends.push(resolve)) };
      },
    });
    return { albums, flushed, ends };
  }

  it("waits for the settle time after the LATEST item, then routes the album once", async () => {
    const clock = new ManualClock();
    const { albums, flushed, ends } = collector(clock);
    const a = await albums.add("dm", "g1", "a");
    await clock.advance(900);
    await albums.add("dm", "g1", "b");
    await clock.advance(900);
    expect(flushed).toEqual([]);
    await clock.advance(100);
    expect(flushed).toEqual([["a", "b"]]);
    expect(albums.size).toBe(0);
    // Every item's update settles with the album's turn, not before.
    let settled = false;
    void a.turn.then(() => {
      settled = true;
    });
    await settle();
    expect(settled).toBe(false);
    ends[0]?.();
    await settle();
    expect(settled).toBe(true);
  });

  it("a trickle is bounded by the total wait", async () => {
    const clock = new ManualClock();
    const { albums, flushed } = collector(clock);
    for (let i = 0; i < 6; i += 1) {
      await albums.add("dm", "g1", `i${i}`);
      await clock.advance(900);
    }
    // 6 items over 5.4 s of 900 ms gaps: flushed at the 5 s bound, with the items that had come.
    expect(flushed).toEqual([["i0", "i1", "i2", "i3", "i4", "i5"]]);
    expect(clock.now() - 1_000_000).toBe(5_400);
  });

  it("ten items flush at once; another album or a flush of the conversation goes first", async () => {
    const clock = new ManualClock();
    const { albums, flushed } = collector(clock);
    for (let i = 0; i < 10; i += 1) await albums.add("dm", "g1", `p${i}`);
    expect(flushed).toHaveLength(1);
    expect(flushed[0]).toHaveLength(10);
    await albums.add("dm", "g2", "x");
    await albums.add("topic", "g3", "t");
    await albums.add("dm", "g4", "y");
    expect(flushed.slice(1)).toEqual([["x"]]);
    await albums.flush("dm");
    expect(flushed.slice(1)).toEqual([["x"], ["y"]]);
    await albums.flushAll();
    expect(flushed.slice(1)).toEqual([["x"], ["y"], ["t"]]);
    expect(clock.pending).toBe(0);
  });
});
