/**
 * Display width for table layout (part of tables.ts). A grid padded by code-point count visibly
 * steps on CJK text, and an auto threshold measured by count sends a table twice the viewport wide
 * down the grid path — so widths are terminal columns, with Python `unicodedata` semantics:
 * East Asian Wide/Fullwidth = 2, a nonzero canonical combining class or one of the invisible joiners
 * below = 0, everything else 1. Pure and dependency-free.
 */

/*
 * Range tables generated from the Unicode 15.0 UCD: East_Asian_Width W/F (EastAsianWidth.txt, with
 * the file's own default of W for unassigned code points in the CJK ideograph blocks and planes 2-3)
 * and canonical combining class != 0 (UnicodeData.txt). JS has no East_Asian_Width property escape
 * and no ccc property, and \p{Mn} is the wrong set: U+FE0F (VS16) is Mn with ccc 0 and Python counts
 * it as one column, which the parity records pin ("❤️ error" lays out 8 wide). Encoding:
 * comma-separated "gap.span" hex pairs, gap = distance from the previous range's end to this start,
 * span = end - start.
 */
const WIDE_RANGES =
  "1100.5f,11bb.1,e.1,bf.3,4.0,3.0,20a.1,16.1,33.b,2c.0,14.0,e.0,9.1,12.1,6.1,9.0,6.0,16.0,8.1,2.0,5.0," +
  "3.0,8.0,5.1,1d.0,24.0,2.0,5.2,2.0,3e.2,19.0,f.0,35c.1,34.0,5.0,32b.19,2.58,d.d5,1b.b,5.3e,3.55,3.66," +
  "6.2a,2.5d,2.53,d.2e,2.27,9.1b6f,41.568c,4.36,49a.1c,284.2ba3,215d.1ff,311.9,17.22,2.12,2.3,96.5f," +
  "80.6,6ffa.4,c.1,f.17f7,9.4d5,2b.8,22e8.3,2.6,2.1,2.122,10.0,1e.2,3.0,f.3,9.18b,3d09.0,cb.0,bf.0,3.9," +
  "66.2,e.2b,5.8,8.1,f.5,9b.20,d.8,2.45,2.15,d.2a,5.4,d.10,4.0,4.46,2.0,2.ba,3.3e,e.3,2.17,13.0,1b.1," +
  "e.0,57.54,31.45,7.0,4.2,3.2,5.3,c.1,8.8,e4.b,5.0,11c.2e,2.9,2.b8,71.c,4.8,8.2d,2.6,9.d,5.8,8.8," +
  "508.fffd,3.fffd";

const COMBINING_RANGES =
  "300.4e,2.1f,114.4,10a.2c,2.0,2.1,2.1,2.0,49.a,31.14,11.0,66.6,3.5,3.1,2.3,24.0,1f.1a,a1.8,a.0,19.3," +
  "2.8,2.2,2.4,2c.2,3d.7,2b.17,2.1c,3d.0,11.0,4.3,68.0,11.0,31.0,3e.0,11.0,6f.0,11.0,6f.0,11.0,80.0," +
  "6f.0,11.0,8.1,66.0,11.0,6e.1,11.0,7d.0,6e.2,e.3,6d.2,e.3,4d.1,1c.0,2.0,2.0,38.1,2.0,6.3,3.0,2.2,2.1," +
  "3f.0,71.0,2.1,53.0,2d0.2,3b5.1,1f.0,9e.0,b.0,cc.0,90.2,dc.1,48.0,15.7,3.0,31.d,2.f,66.0,10.0,27.8," +
  "37.1,3b.0,c.1,44.0,99.2,2.c,2.6,5.0,7.0,4.1,c7.3f,2d1.c,5.0,4.b,bff.2,8e.0,61.1f,22b.5,6a.1,75d5.0," +
  "5.9,21.1,51.1,115.0,26.0,98.0,1c.11,3a.2,26.0,60.0,d.0,f0.0,2.2,3.1,6.1,2.0,35.0,f7.0,4f31.0,302.f," +
  "3ce.0,e3.0,96.4,693.0,2.0,29.2,5.0,a6.1,23e.3,184.1,51.2,47.a,32.3,c1.0,2a.0,f.0,3a.1,46.2,31.1," +
  "3f.0,4d.0,a.0,6b.1,b3.1,51.1,11.0,19.6,4.4,ce.0,4.0,18.0,64.1,fc.1,7f.0,77.1,74.0,10e.1,103.1,5.0," +
  "9d.0,54.0,13.0,52.0,1a6.0,103.0,2.1,52.0,1aa.1,4bae.4,3c.6,4ba.1,4cad.0,14c7.4,4.5,9.7,3.6,1f.3," +
  "95.2,dbc.6,2.10,3.6,2.1,2.4,65.0,a1.6,178.0,3e.3,1fd.3,3e1.6,6e.6";

/** Decode a range table into a flat [start0, end0, start1, end1, …] array for binary search. */
function decodeRanges(encoded: string): Uint32Array {
  const pairs = encoded.split(",");
  const out = new Uint32Array(pairs.length * 2);
  let prev = 0;
  pairs.forEach((pair, i) => {
    const [gap = "0", span = "0"] = pair.split(".");
    const start = prev + Number.parseInt(gap, 16);
    prev = start + Number.parseInt(span, 16);
    out[i * 2] = start;
    out[i * 2 + 1] = prev;
  });
  return out;
}

const WIDE = decodeRanges(WIDE_RANGES);
const COMBINING = decodeRanges(COMBINING_RANGES);

function inRanges(table: Uint32Array, cp: number): boolean {
  let lo = 0;
  let hi = table.length / 2 - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (cp < table[mid * 2]!) hi = mid - 1;
    else if (cp > table[mid * 2 + 1]!) lo = mid + 1;
    else return true;
  }
  return false;
}

/** Columns one code point occupies. */
function codePointWidth(cp: number): number {
  // Below U+0300 nothing combines and nothing is wide: the common case skips both searches.
  if (cp < 0x300) return 1;
  // Zero-width space/non-joiner/joiner, word joiner and BOM draw nothing but are not marks.
  if (cp === 0x200b || cp === 0x200c || cp === 0x200d || cp === 0x2060 || cp === 0xfeff) return 0;
  if (inRanges(COMBINING, cp)) return 0;
  return inRanges(WIDE, cp) ? 2 : 1;
}

/** Terminal columns `text` occupies: East Asian W/F = 2, combining marks and ZW joiners = 0, else 1. */
export function displayWidth(text: string): number {
  let width = 0;
  for (let i = 0; i < text.length; i++) {
    const unit = text.charCodeAt(i);
    if (unit < 0x300) {
      width += 1;
      continue;
    }
    // Measure whole code points: a surrogate pair is one character, never two halves.
    const cp = text.codePointAt(i)!;
    if (cp > 0xffff) i++;
    width += codePointWidth(cp);
  }
  return width;
}
