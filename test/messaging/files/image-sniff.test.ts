import { describe, expect, it } from "vitest";
import { SNIFF_BYTES, sniffRasterMime } from "../../../src/messaging/files/image-sniff.js";

/** `head` followed by zero padding up to `length` bytes. */
function bytes(head: readonly number[] | string, length = 32): Uint8Array {
  const lead = typeof head === "string" ? [...Buffer.from(head, "latin1")] : head;
  const out = new Uint8Array(Math.max(length, lead.length));
  out.set(lead);
  return out;
}

/** A real 40-byte-info-header BMP's first 18 bytes. */
const BMP_HEAD = [0x42, 0x4d, 0x3a, 0, 0, 0, 0, 0, 0, 0, 0x36, 0, 0, 0, 40, 0, 0, 0];

describe("sniffRasterMime", () => {
  it.each([
    ["image/png", [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]],
    ["image/jpeg", [0xff, 0xd8, 0xff, 0xe0]],
    ["image/gif", "GIF87a"],
    ["image/gif", "GIF89a"],
    ["image/webp", "RIFF\x24\x00\x00\x00WEBPVP8 "],
    ["image/bmp", BMP_HEAD],
  ] as const)("detects %s by its leading bytes", (mime, head) => {
    expect(sniffRasterMime(bytes(head))).toBe(mime);
  });

  it("never reports SVG, which is scriptable markup with no signature", () => {
    expect(sniffRasterMime(bytes('<svg xmlns="http://www.w3.org/2000/svg">'))).toBeNull();
    expect(sniffRasterMime(bytes('<?xml version="1.0"?><svg/>'))).toBeNull();
  });

  it("refuses a script whatever its name claims", () => {
    expect(sniffRasterMime(bytes("#!/bin/sh\nrm -rf ~\n"))).toBeNull();
  });

  it("confirms the RIFF form tag, so WAVE audio is not an image", () => {
    expect(sniffRasterMime(bytes("RIFF\x24\x00\x00\x00WAVEfmt "))).toBeNull();
  });

  it("confirms a BMP info-header size, so text that opens with 'BM' is not an image", () => {
    expect(sniffRasterMime(bytes("BMW quarterly report, draft 3"))).toBeNull();
    expect(sniffRasterMime(new Uint8Array(BMP_HEAD.slice(0, 17)))).toBeNull();
    expect(SNIFF_BYTES).toBeGreaterThanOrEqual(BMP_HEAD.length);
  });

  it("matches nothing on a truncated signature or an empty read", () => {
    expect(sniffRasterMime(new Uint8Array([0x89, 0x50, 0x4e, 0x47]))).toBeNull();
    expect(sniffRasterMime(new Uint8Array([0xff, 0xd8]))).toBeNull();
    expect(sniffRasterMime(new Uint8Array(0))).toBeNull();
  });

  it("accepts a Node Buffer, which is a Uint8Array", () => {
    expect(sniffRasterMime(Buffer.from([0xff, 0xd8, 0xff, 0xdb, 0, 0]))).toBe("image/jpeg");
  });
});
