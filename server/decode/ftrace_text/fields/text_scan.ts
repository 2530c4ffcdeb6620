/** Character scanning on a text range: key characters, String.trim's whitespace, searching and comparing in place. */

export function isKeyChar(c: number): boolean {
  return (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || (c >= 48 && c <= 57) || c === 95 || c === 46;
}

/** Index of char code `c` in t[s, e), or -1 (never scans past e). */
export function indexOfChar(t: string, c: number, s: number, e: number): number {
  for (let i = s; i < e; i++) if (t.charCodeAt(i) === c) return i;
  return -1;
}

/** Whether t[s, s + str.length) equals str. */
export function sameChars(t: string, s: number, str: string): boolean {
  const n = str.length;
  for (let k = 0; k < n; k++) if (t.charCodeAt(s + k) !== str.charCodeAt(k)) return false;
  return true;
}

/** String.prototype.trim's whitespace other than ' ' (and the line terminators). */
export function isOtherSpace(c: number): boolean {
  return (
    (c >= 9 && c <= 13) ||
    c === 0xa0 ||
    c === 0x1680 ||
    (c >= 0x2000 && c <= 0x200a) ||
    c === 0x2028 ||
    c === 0x2029 ||
    c === 0x202f ||
    c === 0x205f ||
    c === 0x3000 ||
    c === 0xfeff
  );
}

/** Start of t[s, e) with spaces skipped, or -1 if other whitespace (String.trim's) is there. */
export function trimStart(t: string, s: number, e: number): number {
  while (s < e && t.charCodeAt(s) === 32) s++;
  return s < e && isOtherSpace(t.charCodeAt(s)) ? -1 : s;
}

/** End of t[s, e) with spaces dropped, or -1 if other whitespace (String.trim's) is there. */
export function trimEnd(t: string, s: number, e: number): number {
  while (e > s && t.charCodeAt(e - 1) === 32) e--;
  return e > s && isOtherSpace(t.charCodeAt(e - 1)) ? -1 : e;
}
