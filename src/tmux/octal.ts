// %output payloads escape bytes below 0x20 and the backslash as \ooo; everything else is raw.
export function decodeOctal(escaped: Buffer): Buffer {
  if (!escaped.includes(0x5c)) return escaped;
  const out = Buffer.allocUnsafe(escaped.length);
  let o = 0;
  for (let i = 0; i < escaped.length; i++) {
    const b = escaped[i]!;
    if (b === 0x5c && isOctal(escaped[i + 1]) && isOctal(escaped[i + 2]) && isOctal(escaped[i + 3])) {
      out[o++] = ((escaped[i + 1]! - 48) << 6) | ((escaped[i + 2]! - 48) << 3) | (escaped[i + 3]! - 48);
      i += 3;
    } else {
      out[o++] = b;
    }
  }
  return out.subarray(0, o);
}

function isOctal(b: number | undefined): boolean {
  return b !== undefined && b >= 48 && b <= 55;
}
