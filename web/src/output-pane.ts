// The retained window of one tool call: monospace text in a scroll box that follows the end while the
// reader is at the bottom, stops following when they scroll up, and follows again once they scroll back
// down. Appends and a slid tail window edit the existing text node in place (no new DOM); comparing the
// windows and re-marking error lines still read the whole window, which the sink keeps bounded.
import { markLines } from "./highlights.js";
export interface OutputPane {
  /** Show this text (the sink's retained window); images are shown below it. */
  show(text: string, images: readonly { data: string; mimeType: string }[]): void;
  clear(message: string): void;
  readonly following: boolean;
}

/**
 * How many leading characters of `old` were evicted if `next` is old's tail followed by new text
 * (0 for a plain append), else -1. A tail window evicts whole lines, so the candidate cuts are the
 * line starts in old where next's first line occurs; each is verified.
 */
export function evicted(old: string, next: string): number {
  if (next.startsWith(old)) return 0;
  const nl = next.indexOf("\n");
  const probe = next.slice(0, nl < 0 ? Math.min(next.length, 64) : nl + 1);
  if (!probe) return -1;
  // Bounded: very repetitive output gives up and is re-rendered whole, which is only less smooth.
  for (let at = old.indexOf(probe, 1), tries = 0; at > 0 && tries < 16; at = old.indexOf(probe, at + 1)) {
    if (nl >= 0 && old.charCodeAt(at - 1) !== 10) continue; // not a line start
    tries++;
    if (old.length - at <= next.length && next.startsWith(old.slice(at))) return at;
  }
  return -1;
}

/** Pixels from the top of the text to the line holding character `index`. */
function offsetOf(node: Text, index: number): number {
  const range = document.createRange();
  range.setStart(node, 0);
  range.setEnd(node, 1);
  const first = range.getBoundingClientRect().top;
  range.setStart(node, index);
  range.setEnd(node, Math.min(index + 1, node.length));
  return range.getBoundingClientRect().top - first;
}

// Within this many pixels of the end counts as "at the bottom" (sub-pixel rounding, zoom).
const SLACK_PX = 8;

export function createOutputPane(scroller: HTMLElement, pre: HTMLElement, jump: HTMLButtonElement, images: HTMLElement): OutputPane {
  const text = document.createTextNode("");
  pre.replaceChildren(text);
  let rendered = "";
  let imageKey = "";
  let following = true;

  const atBottom = (): boolean => scroller.scrollHeight - scroller.scrollTop - scroller.clientHeight <= SLACK_PX;
  const setFollowing = (on: boolean): void => {
    following = on;
    jump.hidden = on;
    scroller.dataset.following = String(on);
  };
  // Where our own toEnd() last put the view. Only a reader moves above it; a box that shrinks (the
  // transcript below grew) or text that changed can leave the view short of the bottom without anyone
  // scrolling, and that scroll event used to switch following off before the resize caught up.
  let placedAt = 0;
  const toEnd = (): void => {
    scroller.scrollTop = scroller.scrollHeight;
    placedAt = scroller.scrollTop;
  };

  scroller.addEventListener(
    "scroll",
    () => {
      if (atBottom()) setFollowing(true);
      else if (scroller.scrollTop < placedAt - SLACK_PX) setFollowing(false);
    },
    { passive: true },
  );
  jump.addEventListener("click", () => {
    setFollowing(true);
    toEnd();
  });
  // The box shrinks when the transcript below it grows; a follower must still see the last line.
  new ResizeObserver(() => {
    if (following) toEnd();
  }).observe(scroller);
  setFollowing(true);

  return {
    show(next, imgs) {
      if (next !== rendered) {
        const cut = evicted(rendered, next);
        if (cut < 0)
          text.data = next; // replaced outright
        else {
          // A tail window slid: drop the evicted head in place and, for a reader who scrolled up,
          // move the scroll position by its height so the lines they are reading stay put.
          const shift = following || cut === 0 ? 0 : offsetOf(text, cut);
          if (cut > 0) text.deleteData(0, cut);
          text.appendData(next.slice(rendered.length - cut));
          if (shift) scroller.scrollTop -= shift;
        }
        rendered = next;
        markLines(text);
        if (next) pre.dataset.filled = "";
        else delete pre.dataset.filled;
      }
      const key = imgs.map((i) => `${i.mimeType}:${i.data.length}:${i.data.slice(0, 32)}`).join("|");
      if (key !== imageKey) {
        imageKey = key;
        images.replaceChildren(
          ...imgs.map((i) => {
            const img = document.createElement("img");
            img.alt = "tool output image";
            img.src = `data:${i.mimeType};base64,${i.data}`;
            return img;
          }),
        );
      }
      if (following) toEnd();
    },
    clear(message) {
      rendered = "";
      imageKey = "";
      text.data = "";
      markLines(text);
      images.replaceChildren();
      delete pre.dataset.filled;
      pre.dataset.empty = message;
      setFollowing(true);
    },
    get following() {
      return following;
    },
  };
}
