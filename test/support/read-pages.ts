// Following the read tool's footers, as a model or an MCP client would: each answer is the shown text,
// one newline, then the notes; the last note names the next call (offset=N, and column=C inside a line
// too long for one answer) until the file is read.

export const READ_MAX_BYTES = 51_200;
export const READ_MAX_LINES = 2000;
/** Room for the notes after the shown text (they sit outside the window, like every tool's footer). */
export const FOOTER_ALLOWANCE = 1024;

export interface ReadAnswer {
  /** The file's text this answer shows. */
  readonly body: string;
  readonly footer: string;
  readonly next?: { readonly offset: number; readonly column?: number };
}

const FOOTER = /(?:^|\n)(\[(?:Showing the first|Lines|Line \d+ has|The file has|The file is empty)[^\n]*\](?:\n\[[^\n]*\])*)$/;

export function parseReadAnswer(text: string): ReadAnswer {
  const m = FOOTER.exec(text);
  if (!m) return { body: text, footer: "" };
  const footer = m[1]!;
  const body = text.slice(0, m.index);
  const n = /Next: offset=(\d+)(?: column=(\d+))?\.\]$/.exec(footer);
  if (!n) return { body, footer };
  return { body, footer, next: { offset: Number(n[1]), ...(n[2] !== undefined ? { column: Number(n[2]) } : {}) } };
}

/** Lines of `text` as a window counts them (a final line without a newline counts). */
function linesOf(text: string): number {
  let n = 0;
  for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) n++;
  return text.length > 0 && !text.endsWith("\n") ? n + 1 : n;
}

/** Throws unless the answer is within read's bound. */
export function checkBound(text: string, answer: ReadAnswer): void {
  if (Buffer.byteLength(answer.body) > READ_MAX_BYTES) throw new Error(`an answer shows ${Buffer.byteLength(answer.body)} bytes of the file`);
  if (linesOf(answer.body) > READ_MAX_LINES) throw new Error(`an answer shows ${linesOf(answer.body)} lines`);
  if (Buffer.byteLength(text) > READ_MAX_BYTES + FOOTER_ALLOWANCE) throw new Error(`an answer is ${Buffer.byteLength(text)} bytes`);
}

/** A lone surrogate: a character split between two answers. */
export const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Calls `read` from `first` on, following each Next, and returns every answer (bounded, never looping). */
export async function followReads(
  read: (args: Record<string, unknown>) => Promise<{ readonly text: string; readonly isError: boolean }>,
  path: string,
  first: Record<string, unknown> = {},
  maxCalls = 10_000,
): Promise<ReadAnswer[]> {
  const answers: ReadAnswer[] = [];
  let args: Record<string, unknown> = { path, ...first };
  for (let call = 0; call < maxCalls; call++) {
    const outcome = await read(args);
    if (outcome.isError) throw new Error(`read ${JSON.stringify(args)} failed: ${outcome.text}`);
    const answer = parseReadAnswer(outcome.text);
    checkBound(outcome.text, answer);
    answers.push(answer);
    if (answer.next === undefined) return answers;
    args = { path, ...answer.next };
  }
  throw new Error("paging did not end");
}
