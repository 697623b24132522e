// Whether a terminal's parser is still inside an escape sequence at the end of some text, by the
// DEC/VT500 state machine the emulator (@xterm/headless) follows. The terminal model needs this to
// know where it may stop writing: it erases the emulator's scrollback between writes with a sequence
// of its own, and that sequence's ESC would end one the program left open — which then means
// something else than when the same bytes arrive in one read.
//
// The trap the stripper's pattern (ansi.ts) does not model: C0 controls inside a sequence are
// executed without ending it (`ESC [` then a newline, then ` q`: the newline moves the cursor and the
// space is still part of the sequence). CAN and SUB abort a sequence, ESC starts a new one.
// 8-bit C1 introducers (U+009B CSI, U+009D OSC, …) start sequences too in the emulator.
import { HOLD_LIMIT } from "./ansi.js";

const enum State {
  Ground,
  Escape,
  EscapeIntermediate,
  CsiEntry,
  CsiParam,
  CsiIntermediate,
  CsiIgnore,
  /** OSC: a string that ends at BEL or ST (ESC \ or U+009C). */
  OscString,
  /** DCS: a string that ends at ST only. */
  String,
  /** SOS, PM, APC: a string that ends at ST, or at a character from U+00A0 on (the emulator's parser errors out). */
  SosPmApcString,
}

function introduces(c: number): boolean {
  return c === 0x1b || c === 0x90 || c === 0x98 || c === 0x9b || c === 0x9d || c === 0x9e || c === 0x9f;
}

function after(c: number): State {
  if (c === 0x9b) return State.CsiEntry;
  if (c === 0x1b) return State.Escape;
  if (c === 0x9d) return State.OscString;
  return c === 0x90 ? State.String : State.SosPmApcString;
}

/** Executed without leaving a sequence: C0 controls other than CAN, SUB and ESC. */
function isExecuted(c: number): boolean {
  return c < 0x20 && c !== 0x18 && c !== 0x1a && c !== 0x1b;
}

function step(state: State, c: number): State {
  if (c === 0x18 || c === 0x1a) return State.Ground;
  if (introduces(c)) return after(c);
  if (c >= 0x80 && c <= 0x9f) return State.Ground; // other C1 controls, ST among them
  switch (state) {
    case State.Ground:
      return State.Ground;
    case State.Escape:
      if (isExecuted(c) || c === 0x7f) return State.Escape;
      if (c >= 0x20 && c <= 0x2f) return State.EscapeIntermediate;
      if (c === 0x5b) return State.CsiEntry;
      if (c === 0x5d) return State.OscString;
      if (c === 0x50) return State.String;
      if (c === 0x58 || c === 0x5e || c === 0x5f) return State.SosPmApcString;
      return State.Ground;
    case State.EscapeIntermediate:
      if (isExecuted(c) || c === 0x7f || (c >= 0x20 && c <= 0x2f)) return State.EscapeIntermediate;
      return State.Ground;
    case State.CsiEntry:
    case State.CsiParam:
      if (isExecuted(c) || c === 0x7f) return state;
      if (c >= 0xa0) return State.Ground; // the emulator's parser errors out to ground
      if (c >= 0x30 && c <= 0x3f) return state === State.CsiEntry || c <= 0x3b ? State.CsiParam : State.CsiIgnore;
      if (c >= 0x20 && c <= 0x2f) return State.CsiIntermediate;
      return c >= 0x40 && c <= 0x7e ? State.Ground : State.CsiIgnore;
    case State.CsiIntermediate:
      if (isExecuted(c) || c === 0x7f || (c >= 0x20 && c <= 0x2f)) return State.CsiIntermediate;
      if (c >= 0xa0) return State.Ground;
      if (c >= 0x30 && c <= 0x3f) return State.CsiIgnore;
      return c >= 0x40 && c <= 0x7e ? State.Ground : State.CsiIgnore;
    case State.CsiIgnore:
      if (c >= 0x40 && c <= 0x7e) return State.Ground;
      return State.CsiIgnore;
    case State.OscString:
      return c === 0x07 ? State.Ground : State.OscString;
    case State.String:
      return State.String;
    case State.SosPmApcString:
      return c >= 0xa0 ? State.Ground : State.SosPmApcString;
  }
}

/**
 * Where the sequence still open at the end of `text` starts (with the ESCs right before it, which it
 * interrupted: held with it, as the stripper does), or -1 when the parser ends in its ground state.
 * Looks back at most HOLD_LIMIT units: an open sequence longer than that is not held.
 */
export function openSequenceStart(text: string): number {
  const floor = Math.max(0, text.length - HOLD_LIMIT);
  let start = lastIntroducer(text, floor, text.length);
  if (start < 0) return -1;
  // A lone ESC right after a string sequence may be the first half of its ST: the string is held too.
  if (start === text.length - 1 && text.charCodeAt(start) === 0x1b) {
    const before = lastIntroducer(text, floor, start);
    const open = before >= 0 ? stateFrom(text, before, start) : State.Ground;
    if (open === State.OscString || open === State.String || open === State.SosPmApcString) start = before;
  }
  if (stateFrom(text, start, text.length) === State.Ground) return -1;
  while (start > floor && text.charCodeAt(start - 1) === 0x1b) start--;
  return start;
}

const C1_INTRODUCER = /[\u0090\u0098\u009b\u009d-\u009f]/g;

/** The last ESC or C1 introducer in `text[floor, end)`, or -1 (native searches: no loop over plain text). */
function lastIntroducer(text: string, floor: number, end: number): number {
  const esc = end > 0 ? text.lastIndexOf("\x1b", end - 1) : -1;
  let last = esc >= floor ? esc : -1;
  C1_INTRODUCER.lastIndex = Math.max(floor, esc + 1);
  for (let m = C1_INTRODUCER.exec(text); m !== null && m.index < end; m = C1_INTRODUCER.exec(text)) last = m.index;
  return last;
}

function stateFrom(text: string, from: number, to: number): State {
  let state = State.Ground;
  for (let i = from; i < to; i++) state = step(state, text.charCodeAt(i));
  return state;
}
