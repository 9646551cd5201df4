/** Put on the line before a ```bash fence: the block is shown but not run (it installs, starts or only configures). */
export const SKIP_MARKER = '<!-- readme-test: skip -->';

export interface BashBlock {
  /** 1-based line of the block's first command in the Markdown file. */
  line: number;
  code: string;
  skipped: boolean;
}

/** Every ```bash block of a Markdown text, in order; `skipped` when the last non-blank line before its fence is SKIP_MARKER. */
export function bashBlocks(markdown: string): BashBlock[] {
  const blocks: BashBlock[] = [];
  let open: BashBlock | undefined;
  let body: string[] = [];
  let previous = '';
  markdown.split('\n').forEach((text, index) => {
    if (!open && /^```bash\s*$/.test(text)) {
      open = { line: index + 2, code: '', skipped: previous.trim() === SKIP_MARKER };
      body = [];
    } else if (open && /^```\s*$/.test(text)) {
      blocks.push({ ...open, code: body.join('\n') });
      open = undefined;
    } else if (open) {
      body.push(text);
    }
    if (text.trim() !== '') previous = text;
  });
  if (open) throw new Error(`unclosed bash block starting at line ${open.line - 1}`);
  return blocks;
}

/**
 * The runnable blocks as one bash script, each headed by its README line
 * (the ERR trap names the failing line), then the value of every variable
 * the examples captured with `NAME=$(…)`, so a capture that came back empty
 * or "null" shows up.
 */
export function readmeScript(blocks: BashBlock[]): { script: string; captured: string[] } {
  const runnable = blocks.filter((b) => !b.skipped);
  const captured = [...new Set(runnable.flatMap((b) => [...b.code.matchAll(/^([A-Z][A-Z0-9_]*)=\$\(/gm)].map((m) => m[1])))];
  const script = [
    'set -euo pipefail',
    `trap 'echo "README script failed: exit $? at: $BASH_COMMAND" >&2' ERR`,
    ...runnable.map((b) => `# --- README.md line ${b.line}\n${b.code}`),
    ...captured.map((name) => `printf 'readme-var %s=%s\\n' ${name} "$${name}"`),
  ].join('\n');
  return { script: `${script}\n`, captured };
}
