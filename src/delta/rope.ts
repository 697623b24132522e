// A string edited at its ends, kept as parts — a flat string, an offset into it, and a tail of
// appended chunks — so that neither a front-drop nor an append copies it: slicing a concatenated
// string flattens it, O(length) per edit (a 50 KB window slid by 32 chars a flush paid a 50 KB copy
// each time). The tail is flattened once the front reaches it, so every appended unit is copied at
// most once. Used by the tracker's explicit edits and by the output sink, which edits its text block.

export class Rope {
  /** The whole string, composed from the parts (a cons of a slice and the tail: no copy). */
  value: string;
  private flat: string;
  private start = 0;
  private tail = "";

  constructor(value: string) {
    this.value = value;
    this.flat = value;
  }

  /** Append `text`. */
  append(text: string): void {
    this.tail = this.tail.length === 0 ? text : this.tail + text;
    this.value = this.value + text;
  }

  /** Drop the first `count` UTF-16 units (0 ≤ count ≤ the length; the caller checked). */
  drop(count: number): void {
    const inFlat = this.flat.length - this.start;
    if (count <= inFlat) this.start += count;
    else {
      this.flat = this.tail.slice(count - inFlat);
      this.tail = "";
      this.start = 0;
    }
    const head = this.start === 0 ? this.flat : this.flat.slice(this.start);
    this.value = this.tail.length === 0 ? head : head + this.tail;
  }
}
