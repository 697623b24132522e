// The retained window of one tool call: monospace text in a scroll box that follows the end while the
// reader is at the bottom, stops following when they scroll up, and follows again once they scroll back
// down. Appends go into the existing text node, so a growing window costs the new bytes, not a re-render.
export interface OutputPane {
  /** Show this text (the sink's retained window); images are shown below it. */
  show(text: string, images: readonly { data: string; mimeType: string }[]): void;
  clear(message: string): void;
  readonly following: boolean;
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
        if (next.length > rendered.length && next.startsWith(rendered)) text.appendData(next.slice(rendered.length));
        else text.data = next; // the window slid (head evicted) or was replaced
        rendered = next;
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
