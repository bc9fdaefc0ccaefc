/**
 * What counts as a raster image, decided by leading bytes.
 *
 * One table shared by both directions of the file path: the inbound sniff of a downloaded attachment
 * and the outbound extractor of a local file the agent referenced. A second copy is how one direction
 * ends up accepting a type the other refuses. Bytes, never the filename or a declared type: both of
 * those are attacker-controlled, and a script named `chart.png` is still a script (CWE-434).
 *
 * SVG is deliberately absent: it is scriptable markup with no fixed signature. This is the SNIFFABLE
 * set; each consumer keeps its own, possibly narrower, allow-list on top. Pure leaf: no imports.
 */

export type RasterMime = "image/png" | "image/jpeg" | "image/gif" | "image/webp" | "image/bmp";

/** How many leading bytes a caller must read for {@link sniffRasterMime} to decide every type. */
export const SNIFF_BYTES = 18;

const PNG = [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a];
const JPEG = [0xff, 0xd8, 0xff];
const GIF87A = [0x47, 0x49, 0x46, 0x38, 0x37, 0x61];
const GIF89A = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61];
const RIFF = [0x52, 0x49, 0x46, 0x46];
const WEBP = [0x57, 0x45, 0x42, 0x50];
const BM = [0x42, 0x4d];
/** Every BMP info-header size in use (core, OS/2 v2 short/long, v1–v5). */
const BMP_INFO_HEADER_SIZES = new Set([12, 16, 40, 52, 56, 64, 108, 124]);

function hasAt(bytes: Uint8Array, offset: number, sig: readonly number[]): boolean {
  return bytes.length >= offset + sig.length && sig.every((b, i) => bytes[offset + i] === b);
}

/**
 * The raster type `bytes` starts with, or null when it is not one of them.
 *
 * Returns the DETECTED type rather than grading a declared one: a file matching no signature is not
 * an image at all, and a real JPEG mislabelled `.png` still goes out with truthful metadata.
 */
export function sniffRasterMime(bytes: Uint8Array): RasterMime | null {
  if (hasAt(bytes, 0, PNG)) return "image/png";
  if (hasAt(bytes, 0, JPEG)) return "image/jpeg";
  if (hasAt(bytes, 0, GIF87A) || hasAt(bytes, 0, GIF89A)) return "image/gif";
  // RIFF is a container (WAVE and AVI share it); only the WEBP form tag at offset 8 makes it an image.
  if (hasAt(bytes, 0, RIFF) && hasAt(bytes, 8, WEBP)) return "image/webp";
  // "BM" alone is two ASCII letters any text file may open with; the info-header size confirms it.
  if (hasAt(bytes, 0, BM) && bytes.length >= SNIFF_BYTES) {
    const infoSize =
      (bytes[14] ?? 0) | ((bytes[15] ?? 0) << 8) | ((bytes[16] ?? 0) << 16) | ((bytes[17] ?? 0) << 24);
    if (BMP_INFO_HEADER_SIZES.has(infoSize)) return "image/bmp";
  }
  return null;
}
