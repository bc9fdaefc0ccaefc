/**
 * Files users send, through the whole channel against the fake: encrypted by baileys' media crypto,
 * served on loopback, fetched and decrypted by parley. The declared length is checked before any
 * request (absent or over the cap: refused, nothing fetched), the real one while and after reading
 * (understated: refused); a damaged file fails its MAC; a path off the media origin is never
 * requested; a location, a poll or a contact card gets a visible note and starts no turn.
 */
import { describe, expect, it, vi } from "vitest";
import type { PromptContent } from "../../src/messaging/turn/provider-events.js";
import { encryptedLength, mediaOriginFor, mediaUrl } from "../../src/whatsapp/attachments.js";
import { connected, done, fakeWhatsAppLab, PNG, selfChat, text } from "./harness.js";

const lab = fakeWhatsAppLab();
const MiB = 1024 * 1024;
const blocks = (p: string | PromptContent[] | undefined): PromptContent[] => (Array.isArray(p) ? p : []);
const seen = (pattern: string) =>
  lab.fake.waitFor(() => lab.fake.visible().some((v) => v.includes(pattern)), 5000, pattern);
const KEY = "whatsapp:default:direct:+4917000000001";

async function channel(turns = 1) {
  const c = await lab.channel({
    turns: () => Array.from({ length: turns }, (_, i) => [text(`answer ${i + 1}`), done]),
    promptCapabilities: { image: true },
  });
  await connected(c, lab.fake);
  return c;
}

describe("files from the operator reach the agent", () => {
  it("a photo arrives as an image block with exactly its bytes, decrypted", async () => {
    const c = await channel();
    const message = await lab.fake.mediaMessage({
      kind: "image",
      bytes: PNG,
      mimetype: "image/png",
      caption: "what is this?",
    });
    selfChat(lab.fake, { message });
    await seen("answer 1");
    expect(c.providers.get(KEY)?.prompts).toEqual([
      [
        { type: "text", text: "what is this?" },
        { type: "image", mimeType: "image/png", data: PNG.toString("base64") },
      ],
    ]);
    expect(lab.fake.downloads).toHaveLength(1);
  });

  it("a document keeps its name (basename only) and its text is injected", async () => {
    const c = await channel();
    const notes = "# Plan\n- ship it\n";
    const message = await lab.fake.mediaMessage({
      kind: "document",
      bytes: Buffer.from(notes),
      mimetype: "text/markdown",
      fileName: "../../etc/plan.md",
    });
    selfChat(lab.fake, { message });
    await seen("answer 1");
    const prompt = blocks(c.providers.get(KEY)?.prompts[0]);
    expect(prompt[0]).toMatchObject({ type: "resource_link", name: "plan.md" });
    expect(prompt[1]).toEqual({ type: "text", text: `Contents of the attached file plan.md:\n${notes}` });
  });
});

describe("lengths: declared before the download, real after", () => {
  it("a declared length over the cap is refused before any request", async () => {
    const c = await channel();
    const message = await lab.fake.mediaMessage({
      kind: "document",
      bytes: Buffer.from("%PDF-1.7\n"),
      mimetype: "application/pdf",
      fileName: "big.pdf",
      declared: 30 * MiB,
      caption: "read this",
    });
    selfChat(lab.fake, { message });
    await seen("answer 1");
    expect(lab.fake.downloads).toEqual([]);
    expect(lab.fake.visible()[0]).toMatch(
      /^⚠️ Could not read big\.pdf: .*declared as 31457280 bytes, over the 26214400-byte limit/,
    );
    expect(JSON.stringify(c.providers.get(KEY)?.prompts[0])).toContain("big.pdf");
  });

  it("a media message that declares no length is refused before any request", async () => {
    await channel();
    const message = await lab.fake.mediaMessage({
      kind: "image",
      bytes: PNG,
      mimetype: "image/png",
      declared: null,
    });
    selfChat(lab.fake, { message });
    await seen("Could not read photo.png");
    expect(lab.fake.downloads).toEqual([]);
    expect(lab.fake.visible()[0]).toContain("declared no length");
  });

  it("an understated length is caught: cut at what the declaration encrypts to, or after the last byte", async () => {
    await channel(2);
    const long = Buffer.concat([PNG, Buffer.alloc(5000, 7)]);
    const cut = await lab.fake.mediaMessage({
      kind: "image",
      bytes: long,
      mimetype: "image/png",
      declared: 100,
      caption: "one",
    });
    selfChat(lab.fake, { message: cut });
    await seen("answer 1");
    // Same padded length as the declaration: only the count after decryption can tell.
    const slightly = Buffer.concat([PNG, Buffer.alloc(105 - PNG.length, 7)]);
    const close = await lab.fake.mediaMessage({
      kind: "image",
      bytes: slightly,
      mimetype: "image/png",
      declared: 100,
      caption: "two",
    });
    expect(encryptedLength(100)).toBe(encryptedLength(105));
    selfChat(lab.fake, { message: close });
    await seen("answer 2");
    const refusals = lab.fake.visible().filter((v) => v.startsWith("⚠️"));
    expect(refusals).toHaveLength(2);
    for (const r of refusals) expect(r).toContain("longer than WhatsApp declared");
    expect(lab.fake.downloads).toHaveLength(2);
  });

  it("a damaged file fails the MAC and is refused", async () => {
    await channel();
    const message = await lab.fake.mediaMessage({
      kind: "image",
      bytes: PNG,
      mimetype: "image/png",
      caption: "x",
    });
    const path = message.imageMessage?.directPath ?? "";
    const res = await fetch(`${lab.fake.origin}${path}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    // Inside the last cipher block: the head still decrypts (and classifies), the MAC does not hold.
    const at = bytes.length - 10 - 4;
    bytes[at] = (bytes[at] ?? 0) ^ 0xff;
    lab.fake.host(path, bytes);
    selfChat(lab.fake, { message });
    await seen("answer 1");
    expect(lab.fake.visible()[0]).toContain("integrity check");
  });

  it("a path that would leave the media origin is never requested", () => {
    const origin = mediaOriginFor(lab.fake.webSocketUrl);
    expect(origin).toBe(lab.fake.origin);
    expect(mediaOriginFor("wss://web.whatsapp.com/ws/chat")).toBe("https://mmg.whatsapp.net");
    expect(() => mediaOriginFor("ws://example.com/ws")).toThrow(/HTTPS only/);
    for (const bad of ["//evil.example/x", "/a/../../b", "https://evil.example/x", "/x#y", "/x\\y"])
      expect(() => mediaUrl(origin, bad)).toThrow();
    expect(mediaUrl(origin, "/v/t62/a.enc?ccb=11-4").toString()).toBe(`${origin}/v/t62/a.enc?ccb=11-4`);
  });
});

describe("what parley cannot read is said, never ignored", () => {
  it("a location, a poll and a contact card each get a note and start no turn", async () => {
    const c = await channel();
    selfChat(lab.fake, { message: { locationMessage: { degreesLatitude: 52.5, degreesLongitude: 13.4 } } });
    selfChat(lab.fake, {
      message: { pollCreationMessage: { name: "Lunch?", options: [{ optionName: "yes" }] } },
    });
    selfChat(lab.fake, { message: { contactMessage: { displayName: "Ada", vcard: "BEGIN:VCARD" } } });
    await vi.waitFor(() => expect(lab.fake.visible()).toHaveLength(3));
    expect(lab.fake.visible()).toEqual([
      "📍 I can't read shared locations: please describe the place in words.",
      '📊 I can\'t take part in polls ("Lunch?"): please ask in words.',
      "👤 I can't read contact cards: please send the details as text.",
    ]);
    expect(c.providers.size).toBe(0);
  });
});
